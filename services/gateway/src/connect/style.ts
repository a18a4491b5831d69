/** The hosted pages' one stylesheet: neutral, readable, high contrast, visible focus. */
export const CONNECT_CSS = `
:root { color-scheme: light; --ink: #1b1f24; --muted: #4a5360; --line: #d5dae1; --accent: #1f4fd1; --bad: #a4161a; --ok: #136f3a; }
* { box-sizing: border-box; }
body { margin: 0; min-height: 100vh; display: flex; align-items: flex-start; justify-content: center;
  background: #f3f5f8; color: var(--ink); font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
.card { width: 100%; max-width: 34rem; margin: 3rem 1rem; padding: 2rem; background: #fff;
  border: 1px solid var(--line); border-radius: 12px; }
h1 { font-size: 1.4rem; margin: 0 0 .5rem; }
h2 { font-size: 1.05rem; margin: 1.75rem 0 .75rem; }
p { margin: .5rem 0; }
.muted { color: var(--muted); font-size: .9rem; }
ul.plain { list-style: none; margin: 0; padding: 0; }
.row { display: flex; align-items: center; justify-content: space-between; gap: 1rem; padding: .75rem 0;
  border-top: 1px solid var(--line); }
.row:first-child { border-top: 0; }
.who { min-width: 0; }
.who strong { display: block; overflow-wrap: anywhere; }
.button, button { display: inline-block; padding: .6rem 1rem; border-radius: 8px; border: 1px solid var(--accent);
  background: var(--accent); color: #fff; font: inherit; font-weight: 600; text-decoration: none; cursor: pointer; }
.button.secondary, button.secondary { background: #fff; color: var(--accent); }
.button:focus-visible, button:focus-visible, input:focus-visible { outline: 3px solid #f5b400; outline-offset: 2px; }
.actions { display: flex; flex-wrap: wrap; gap: .75rem; margin-top: 1rem; }
.status { font-size: .85rem; font-weight: 600; }
.status.active { color: var(--ok); }
.status.problem { color: var(--bad); }
.notice { padding: .75rem 1rem; border-radius: 8px; border: 1px solid var(--line); background: #f8fafc; }
.notice.problem { border-color: var(--bad); background: #fdf3f3; }
.notice.ok { border-color: var(--ok); background: #f1faf4; }
fieldset { border: 0; padding: 0; margin: 0; }
legend { font-weight: 600; margin-bottom: .5rem; }
label.choice { display: flex; gap: .6rem; align-items: flex-start; padding: .6rem 0; border-top: 1px solid var(--line); }
label.choice input { margin-top: .3rem; width: 1.1rem; height: 1.1rem; }
`;
