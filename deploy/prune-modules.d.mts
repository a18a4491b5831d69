/** The top-level packages the runtime never loads (removed with what only they need). */
export declare const BUILD_ONLY: string[];
/** Removes `names` from `modules` and whatever of .pnpm only they needed; answers what went. */
export declare function pruneModules(modules: string, names?: string[]): string[];
