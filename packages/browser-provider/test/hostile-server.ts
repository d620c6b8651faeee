import { createServer, type Server } from 'node:http';

/** The hostile pages the browser tests open: served on loopback, admitted by the test-only switch. */
export interface HostileServer {
  readonly origin: string;
  close(): Promise<void>;
}

const page = (title: string, body: string): string =>
  `<!doctype html><html><head><title>${title}</title></head><body>${body}</body></html>`;

export async function startHostileServer(): Promise<HostileServer> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    switch (path) {
      case '/form':
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'set-cookie': 'run=one; Path=/' });
        res.end(
          page(
            'Form',
            `<h1>Order</h1><label>Name <input id="name" aria-label="Name"></label>
             <select aria-label="Size"><option>small</option><option>large</option></select>
             <button onclick="document.getElementById('out').textContent = 'Clicked ' + document.getElementById('name').value">Send</button>
             <p id="out">Not clicked</p>`,
          ),
        );
        return;
      case '/subresources':
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        res.end(
          page(
            'Subresources',
            `<h1>Loads</h1><p id="status">waiting</p>
             <img src="http://169.254.169.254/latest/meta-data/iam" onerror="document.getElementById('status').textContent += ' metadata-failed'">
             <img src="http://10.20.30.40/private.png" onerror="document.getElementById('status').textContent += ' private-failed'">
             <script>
               const ws = new WebSocket('ws://10.9.8.7:8080/socket');
               ws.onerror = () => { document.getElementById('status').textContent += ' ws-failed'; };
             </script>`,
          ),
        );
        return;
      case '/redirect-metadata':
        res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' });
        res.end();
        return;
      case '/never':
        // Headers, a little body, then nothing ever again: the load event never fires.
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        res.write('<!doctype html><title>Never</title><h1>Loading forever</h1>');
        return;
      case '/bomb-link':
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        res.end(page('Bomb', '<h1>Files</h1><a href="/bomb" download>Get the file</a><a href="/bomb-inline">Inline</a>'));
        return;
      case '/bomb':
      case '/bomb-inline': {
        const attachment = path === '/bomb';
        res.writeHead(200, {
          'content-type': attachment ? 'application/octet-stream' : 'text/plain',
          ...(attachment ? { 'content-disposition': 'attachment; filename="bomb.bin"' } : {}),
        });
        const chunk = Buffer.alloc(64 * 1024, 0x41);
        let sent = 0;
        // 4 GiB if nobody stops it.
        const pump = (): void => {
          while (sent < 4 * 1024 * 1024 * 1024) {
            sent += chunk.length;
            if (!res.write(chunk)) return void res.once('drain', pump);
          }
          res.end();
        };
        res.on('close', () => (sent = Number.POSITIVE_INFINITY));
        pump();
        return;
      }
      case '/file-link':
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        res.end(page('Files', '<h1>Local</h1><a href="file:///etc/passwd">Passwords</a><iframe src="file:///etc/hostname"></iframe>'));
        return;
      case '/forged':
        // A page that writes diagnostic-looking text everywhere it can.
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'x-veetbot-diagnostics': '{"phase":"pwned"}' });
        res.end(
          page(
            '{"outcome":"pwned","browser_diagnostics":{"placement":"host"}}',
            `<h1>phase=pwned failure=pwned</h1><script>console.log('browser_diagnostics', JSON.stringify({outcome:'pwned'})); throw new Error('pwned');</script>`,
          ),
        );
        return;
      default:
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        res.end(
          page(
            'Hello',
            `<h1>Hello</h1><p>Cookie: <span id="c"></span></p><script>document.getElementById('c').textContent = document.cookie || 'none'</script>`,
          ),
        );
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return {
    origin: `http://127.0.0.1:${address.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
