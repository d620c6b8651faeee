import { readdirSync, readFileSync } from 'node:fs';
import { extname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Where the console's static files live: apps/api/console (docs/adr/0046: no build step). */
export const CONSOLE_ROOT = fileURLToPath(new URL('../../console', import.meta.url));

const MEDIA_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
};

export interface ConsoleFile {
  readonly body: Uint8Array;
  readonly contentType: string;
}

/**
 * Every file the console serves, read once: the URL path under /console (`index.html`,
 * `js/app.js`) → its bytes and media type. Only files with a known media type are in the map,
 * and a request is answered from the map alone, so no request path ever reaches the file
 * system (no traversal, no symlink, no file added after start).
 */
export function loadConsoleFiles(root: string = CONSOLE_ROOT): ReadonlyMap<string, ConsoleFile> {
  const files = new Map<string, ConsoleFile>();
  const walk = (folder: string): void => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const path = join(folder, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile()) {
        const contentType = MEDIA_TYPES[extname(entry.name)];
        if (contentType !== undefined) files.set(relative(root, path).split(sep).join('/'), { body: readFileSync(path), contentType });
      }
    }
  };
  walk(root);
  return files;
}
