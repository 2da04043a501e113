import { spawn } from 'node:child_process';

/**
 * Opens `url` in the person's browser, when there is one to open: `open` on macOS, `start` on
 * Windows, `xdg-open` on Linux with a display. Never throws and never waits: a machine without a
 * browser (a server, a container, CI) only misses the convenience, the URL is printed anyway.
 *
 * @returns whether an opener was started (not whether a browser showed the page).
 */
export function openInBrowser(url: string, options: { platform: NodeJS.Platform; environment: Record<string, string | undefined> }): boolean {
  const opener = openerFor(options.platform, options.environment);
  if (opener === undefined) return false;
  try {
    const child = spawn(opener.command, [...opener.args, url], { detached: true, stdio: 'ignore', windowsHide: true });
    child.on('error', () => undefined);
    child.unref();
    return true;
  } catch {
    return false;
  }
}

function openerFor(platform: NodeJS.Platform, environment: Record<string, string | undefined>): { command: string; args: string[] } | undefined {
  if (platform === 'darwin') return { command: 'open', args: [] };
  // `start` is a cmd built-in; its first quoted argument is the window title.
  if (platform === 'win32') return { command: 'cmd', args: ['/c', 'start', '""'] };
  const hasDisplay = Boolean(environment.DISPLAY) || Boolean(environment.WAYLAND_DISPLAY);
  return hasDisplay ? { command: 'xdg-open', args: [] } : undefined;
}
