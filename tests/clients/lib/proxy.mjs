// A transparent logging proxy for one client's traffic: node proxy.mjs UPSTREAM_PORT LOGFILE
// Listens on 127.0.0.1 (port 0), prints "listening PORT", forwards every request to
// 127.0.0.1:UPSTREAM_PORT unchanged (bodies and SSE streams pass through as they arrive, Host is
// rewritten to the upstream's) and appends one JSON line per exchange to LOGFILE:
// {n, t, method, path, reqHeaders, reqBody, status, resHeaders, resBody, ms, aborted?}
// Authorization values are redacted.
import http from 'node:http';
import fs from 'node:fs';

const [upstreamPort, logFile] = process.argv.slice(2);
const out = fs.openSync(logFile, 'a');
let n = 0;
const open = new Map();

function redact(headers) {
  const h = { ...headers };
  if (h.authorization) h.authorization = h.authorization.replace(/^(Bearer\s+).*/i, '$1<redacted>');
  return h;
}
function write(entry) {
  fs.writeSync(out, JSON.stringify(entry) + '\n');
}

const server = http.createServer((req, res) => {
  const entry = { n: ++n, t: new Date().toISOString(), method: req.method, path: req.url, reqHeaders: redact(req.headers) };
  const started = Date.now();
  const reqChunks = [];
  const resChunks = [];
  open.set(entry.n, { entry, resChunks, started });
  const finish = (extra = {}) => {
    if (!open.delete(entry.n)) return;
    entry.resBody = Buffer.concat(resChunks).toString('utf8');
    entry.ms = Date.now() - started;
    Object.assign(entry, extra);
    write(entry);
  };
  const up = http.request(
    { host: '127.0.0.1', port: upstreamPort, method: req.method, path: req.url, headers: { ...req.headers, host: `127.0.0.1:${upstreamPort}` } },
    (ures) => {
      entry.status = ures.statusCode;
      entry.resHeaders = ures.headers;
      res.writeHead(ures.statusCode, ures.headers);
      res.flushHeaders();
      ures.on('data', (c) => {
        resChunks.push(c);
        res.write(c);
      });
      ures.on('end', () => {
        res.end();
        finish();
      });
      ures.on('error', () => finish({ aborted: 'upstream' }));
    },
  );
  up.on('error', (e) => {
    entry.status = 502;
    finish({ proxyError: String(e) });
    if (!res.headersSent) res.writeHead(502);
    res.end();
  });
  req.on('data', (c) => {
    reqChunks.push(c);
    up.write(c);
  });
  req.on('end', () => {
    entry.reqBody = Buffer.concat(reqChunks).toString('utf8');
    up.end();
  });
  // The client went away (e.g. it aborted a stream): stop the upstream request too.
  res.on('close', () => {
    if (!res.writableFinished) {
      up.destroy();
      finish({ aborted: 'client' });
    }
  });
});

server.listen(0, '127.0.0.1', () => {
  console.log(`listening ${server.address().port}`);
});

function flushAll() {
  for (const { entry, resChunks, started } of open.values()) {
    entry.resBody = Buffer.concat(resChunks).toString('utf8');
    entry.ms = Date.now() - started;
    entry.aborted = 'proxy-exit';
    write(entry);
  }
  open.clear();
}
for (const sig of ['SIGTERM', 'SIGINT']) {
  process.on(sig, () => {
    flushAll();
    process.exit(0);
  });
}
