#!/usr/bin/env node
// A long-running application using the real eureka-js-client (4.5.x), for the interop suite.
//
// It registers under --app / --instance-id with its HTTP port --port (a real HTTP server listens
// there), heartbeats and fetches the registry every --interval ms, and answers on 127.0.0.1:PORT:
//   GET /whoami        -> {"client": "js", "app": ..., "instanceId": ...}
//   GET /discovery     -> the client's cache by app: {APP: [instance, ...]} (client.cache.app)
//   GET /lookup/APP    -> client.getInstancesByAppId(APP)
//   GET /vip/VIP       -> client.getInstancesByVipAddress(VIP)
// SIGTERM / SIGINT -> client.stop() (DELETE), then exit 0.
//
// HTTPS to the registry: --ssl sets eureka.ssl (the client then builds https:// URLs) and
// --ca FILE adds that PEM CA to every request through requestMiddleware (the `request` library's
// `ca` option), the client's documented hook for changing its requests.
//
// usage: node js_client.js --server-port 8761 --app js-interop --port 8080 --instance-id js-1
//                          [--server-host 127.0.0.1] [--ssl] [--ca ca.pem]
//                          [--interval 1000] [--metadata '{"k":"v"}'] [--service-path /eureka/apps/]
'use strict';

const fs = require('fs');
const http = require('http');
const path = require('path');
const { createRequire } = require('module');

// eureka-js-client is installed (npm ci) in interop/js/node_modules
const requireFromJs = createRequire(path.join(__dirname, '..', 'js', 'package.json'));
const { Eureka } = requireFromJs('eureka-js-client');

const argv = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : dflt;
};
const serverHost = opt('--server-host', '127.0.0.1');
const serverPort = parseInt(opt('--server-port'), 10);
const ssl = argv.includes('--ssl');
const caFile = opt('--ca');
const ca = caFile ? fs.readFileSync(caFile) : null;
const app = opt('--app');
const port = parseInt(opt('--port'), 10);
const instanceId = opt('--instance-id', `${app}-${port}`);
const interval = parseInt(opt('--interval', '1000'), 10);
const metadata = JSON.parse(opt('--metadata', '{}'));
const servicePath = opt('--service-path', '/eureka/apps/');

const t0 = Date.now();
const ts = () => `[${((Date.now() - t0) / 1000).toFixed(2).padStart(7)}s]`;
const logger = {
  level: () => {},
  debug: (...a) => console.log(ts(), 'DEBUG', ...a.map(String)),
  info: (...a) => console.log(ts(), 'INFO', ...a.map(String)),
  warn: (...a) => console.log(ts(), 'WARN', ...a.map(String)),
  error: (...a) => console.log(ts(), 'ERROR', ...a.map(String)),
};

const client = new Eureka({
  logger,
  // every request to the registry trusts the test CA when one is given
  requestMiddleware: (requestOpts, done) => done(ca ? Object.assign(requestOpts, { ca }) : requestOpts),
  cwd: __dirname, // no eureka-client.yml is looked up anywhere else
  instance: {
    app,
    instanceId,
    hostName: '127.0.0.1',
    ipAddr: '127.0.0.1',
    statusPageUrl: `http://127.0.0.1:${port}/whoami`,
    healthCheckUrl: `http://127.0.0.1:${port}/whoami`,
    port: { $: port, '@enabled': 'true' },
    vipAddress: app,
    metadata,
    dataCenterInfo: { '@class': 'com.netflix.appinfo.InstanceInfo$DefaultDataCenterInfo', name: 'MyOwn' },
  },
  eureka: {
    host: serverHost,
    port: serverPort,
    ssl,
    servicePath,
    heartbeatInterval: interval,
    registryFetchInterval: interval,
    maxRetries: 3,
    requestRetryDelay: 200,
  },
});

['started', 'registered', 'deregistered', 'registryUpdated'].forEach((e) =>
  client.on(e, () => console.log(ts(), 'EVENT', e)));

function reply(res, code, obj) {
  const data = JSON.stringify(obj);
  res.writeHead(code, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(data) });
  res.end(data);
}

const server = http.createServer((req, res) => {
  const url = new URL(req.url, 'http://127.0.0.1');
  const parts = url.pathname.split('/').filter(Boolean).map(decodeURIComponent);
  try {
    if (parts.length === 1 && parts[0] === 'whoami') {
      return reply(res, 200, { client: 'js', app: app.toUpperCase(), instanceId, port });
    }
    if (parts.length === 1 && parts[0] === 'discovery') return reply(res, 200, client.cache.app);
    if (parts.length === 2 && parts[0] === 'lookup') return reply(res, 200, client.getInstancesByAppId(parts[1]));
    if (parts.length === 2 && parts[0] === 'vip') return reply(res, 200, client.getInstancesByVipAddress(parts[1]));
    return reply(res, 404, { error: 'no such endpoint' });
  } catch (e) {
    return reply(res, 500, { error: String(e) });
  }
});

let stopping = false;
function shutdown(sig) {
  if (stopping) return;
  stopping = true;
  console.log(ts(), `${sig}: stopping the eureka client (DELETE)`);
  setTimeout(() => { console.log(ts(), 'stop timed out'); process.exit(3); }, 10000).unref();
  client.stop((err) => {
    console.log(ts(), 'stopped, err =', err ? String(err) : null);
    server.close();
    process.exit(err ? 1 : 0);
  });
}
process.on('SIGTERM', () => shutdown('SIGTERM'));
process.on('SIGINT', () => shutdown('SIGINT'));

server.listen(port, '127.0.0.1', () => {
  console.log(ts(), `listening on 127.0.0.1:${port}; registering ${app}/${instanceId} with ${ssl ? 'https' : 'http'}://${serverHost}:${serverPort}${servicePath}`);
  client.start((err) => console.log(ts(), 'start callback err =', err ? String(err) : null));
});
