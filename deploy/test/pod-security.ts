/**
 * The Pod Security Standards' "restricted" profile (kubernetes.io/docs/concepts/security/
 * pod-security-standards, which the `restricted` level of Pod Security Admission enforces), checked
 * on a pod template, plus what this deployment adds on top: no service account token, a read-only
 * root filesystem. Each problem is one line naming the rule and the container.
 */

// biome-ignore lint/suspicious/noExplicitAny: a pod spec as rendered, checked field by field here
type PodSpec = any;
// biome-ignore lint/suspicious/noExplicitAny: a container as rendered
type Container = any;

/** The volume types "restricted" allows. */
const VOLUME_TYPES = [
  'configMap',
  'csi',
  'downwardAPI',
  'emptyDir',
  'ephemeral',
  'persistentVolumeClaim',
  'projected',
  'secret',
];

/** Sysctls the baseline profile lets a pod set. */
const SAFE_SYSCTLS = [
  'kernel.shm_rmid_forced',
  'net.ipv4.ip_local_port_range',
  'net.ipv4.ip_unprivileged_port_start',
  'net.ipv4.tcp_syncookies',
  'net.ipv4.ping_group_range',
  'net.ipv4.ip_local_reserved_ports',
  'net.ipv4.tcp_keepalive_time',
  'net.ipv4.tcp_fin_timeout',
  'net.ipv4.tcp_keepalive_intvl',
  'net.ipv4.tcp_keepalive_probes',
];

const SECCOMP_OK = ['RuntimeDefault', 'Localhost'];

function allContainers(pod: PodSpec): Container[] {
  return [...(pod.initContainers ?? []), ...(pod.containers ?? []), ...(pod.ephemeralContainers ?? [])];
}

/** Every rule of the restricted profile (baseline included) this pod breaks. */
export function restrictedProblems(pod: PodSpec): string[] {
  const problems: string[] = [];
  const podContext = pod.securityContext ?? {};
  const fail = (rule: string, who = 'pod') => problems.push(`${who}: ${rule}`);

  if (pod.hostNetwork || pod.hostPID || pod.hostIPC) fail('host namespaces must not be shared');
  if (podContext.windowsOptions?.hostProcess) fail('hostProcess must not be set');
  for (const volume of pod.volumes ?? []) {
    const type = Object.keys(volume).find((k) => k !== 'name');
    if (!type || !VOLUME_TYPES.includes(type)) fail(`volume ${volume.name} of type ${type} is not allowed`);
  }
  for (const sysctl of podContext.sysctls ?? [])
    if (!SAFE_SYSCTLS.includes(sysctl.name)) fail(`sysctl ${sysctl.name} is not allowed`);
  if (podContext.runAsUser === 0) fail('runAsUser must not be 0');
  if (podContext.seLinuxOptions && !seLinuxOk(podContext.seLinuxOptions)) fail('seLinuxOptions not allowed');
  if (podContext.appArmorProfile?.type === 'Unconfined') fail('AppArmor must not be Unconfined');
  const podSeccomp = podContext.seccompProfile?.type;
  if (podSeccomp !== undefined && !SECCOMP_OK.includes(podSeccomp))
    fail(`seccomp ${podSeccomp} is not allowed`);

  for (const container of allContainers(pod)) {
    const who = `container ${container.name}`;
    const context = container.securityContext ?? {};
    if (context.privileged) fail('must not be privileged', who);
    if (context.windowsOptions?.hostProcess) fail('hostProcess must not be set', who);
    if (context.procMount && context.procMount !== 'Default') fail('procMount must be Default', who);
    if (context.seLinuxOptions && !seLinuxOk(context.seLinuxOptions)) fail('seLinuxOptions not allowed', who);
    if (context.appArmorProfile?.type === 'Unconfined') fail('AppArmor must not be Unconfined', who);
    for (const port of container.ports ?? []) if (port.hostPort) fail('hostPort must not be set', who);
    if (context.allowPrivilegeEscalation !== false) fail('allowPrivilegeEscalation must be false', who);
    if (!(context.runAsNonRoot ?? podContext.runAsNonRoot)) fail('runAsNonRoot must be true', who);
    if (context.runAsUser === 0) fail('runAsUser must not be 0', who);
    const seccomp = context.seccompProfile?.type ?? podSeccomp;
    if (!SECCOMP_OK.includes(seccomp)) fail('seccompProfile must be RuntimeDefault or Localhost', who);
    const capabilities = context.capabilities ?? {};
    if (!(capabilities.drop ?? []).includes('ALL')) fail('capabilities must drop ALL', who);
    for (const added of capabilities.add ?? [])
      if (added !== 'NET_BIND_SERVICE') fail(`capability ${added} must not be added`, who);
  }
  return problems;
}

/** What this deployment asks beyond "restricted": no API token in the pod, nothing written outside volumes. */
export function hardeningProblems(pod: PodSpec): string[] {
  const problems: string[] = [];
  if (pod.automountServiceAccountToken !== false)
    problems.push('pod: automountServiceAccountToken must be false');
  for (const container of allContainers(pod))
    if (container.securityContext?.readOnlyRootFilesystem !== true)
      problems.push(`container ${container.name}: readOnlyRootFilesystem must be true`);
  return problems;
}

function seLinuxOk(options: { type?: string; user?: string; role?: string }): boolean {
  const typeOk =
    !options.type || ['container_t', 'container_init_t', 'container_kvm_t'].includes(options.type);
  return typeOk && !options.user && !options.role;
}
