/** A status line: polite for progress and success, assertive (role=alert) for problems. */
export interface NoticeValue {
  kind: 'ok' | 'problem' | 'info';
  text: string;
}

export function Notice({ notice }: { notice: NoticeValue | null }) {
  if (!notice) return <p class="sr-only" role="status" />;
  return notice.kind === 'problem' ? (
    <p class="notice problem" role="alert">
      {notice.text}
    </p>
  ) : (
    <p class={`notice ${notice.kind}`} role="status">
      {notice.text}
    </p>
  );
}
