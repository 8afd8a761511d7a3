// The dashboard as an operator uses it, in headless Chromium, against the real binary and a
// real py-eureka-client, with basic auth on. Run through run.sh, which sets HEUREKA_BIN,
// PYTHON, PY_CLIENT and SCREENSHOTS. Waits are bounded (each expectation has a timeout that
// only guards against a hang); nothing asserts on durations.
'use strict';

const assert = require('node:assert/strict');
const { spawn } = require('node:child_process');
const net = require('node:net');
const path = require('node:path');
const { chromium } = require('playwright-core');

const USER = 'admin';
const PASSWORD = 's3cret';
const AUTH = 'Basic ' + Buffer.from(`${USER}:${PASSWORD}`).toString('base64');
const SCREENSHOTS = process.env.SCREENSHOTS;
// The registry's store for this run (heureka.persistence.dir): a fresh directory each time.
const STORE = require('node:fs').mkdtempSync(path.join(require('node:os').tmpdir(), 'heureka-browser-'));
// Spring Cloud Netflix's banner, word for word.
const EMERGENCY = "EMERGENCY! EUREKA MAY BE INCORRECTLY CLAIMING INSTANCES ARE UP WHEN THEY'RE NOT. RENEWALS ARE LESSER THAN THRESHOLD AND HENCE THE INSTANCES ARE NOT BEING EXPIRED JUST TO BE SAFE.";

const children = [];
let passed = 0;

// Ports handed out by this run: the kernel may give a closed port back at the next ask, and
// two of our listeners on one port make the second fail to start.
const handedOut = new Set();

async function freePort() {
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = await new Promise((resolve, reject) => {
      const server = net.createServer();
      server.listen(0, '127.0.0.1', () => {
        const { port } = server.address();
        server.close(() => resolve(port));
      });
      server.on('error', reject);
    });
    if (!handedOut.has(port)) {
      handedOut.add(port);
      return port;
    }
  }
  throw new Error('no free port not already handed out in 100 tries');
}

function start(command, args, name) {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const log = [];
  for (const stream of [child.stdout, child.stderr]) {
    stream.on('data', (chunk) => { log.push(chunk.toString()); if (log.length > 200) log.shift(); });
  }
  child.log = log;
  child.label = name;
  children.push(child);
  return child;
}

async function step(name, body) {
  process.stdout.write(`  ${name} ... `);
  await body();
  passed += 1;
  console.log('ok');
}

async function shot(page, name) {
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true });
}

// Runs a command to its end: its exit code and output.
function run(command, args) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => { stdout += chunk; });
    child.stderr.on('data', (chunk) => { stderr += chunk; });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

// The mean brightness (0-255) of the bottom rows of a full-page capture of `page`, decoded by
// a canvas in a blank page of the same browser.
async function bottomBrightness(page) {
  const png = await page.screenshot({ fullPage: true });
  const blank = await page.context().newPage();
  try {
    return await blank.evaluate(async (data) => {
      const image = new Image();
      image.src = `data:image/png;base64,${data}`;
      await image.decode();
      const canvas = document.createElement('canvas');
      canvas.width = image.width;
      canvas.height = image.height;
      const context = canvas.getContext('2d');
      context.drawImage(image, 0, 0);
      const rows = 8;
      const pixels = context.getImageData(0, image.height - rows, image.width, rows).data;
      let sum = 0;
      for (let i = 0; i < pixels.length; i += 4) sum += (pixels[i] + pixels[i + 1] + pixels[i + 2]) / 3;
      return sum / (pixels.length / 4);
    }, png.toString('base64'));
  } finally {
    await blank.close();
  }
}

async function main() {
  const port = await freePort();
  const clientPort = await freePort();
  const dnsPort = await freePort();
  const root = `http://127.0.0.1:${port}`;
  const api = `${root}/eureka`;
  // A Content-Type only with a body: on a GET of the registry it is what Spring's and fargo's
  // clients send, and would make this script a consumer a drain waits for.
  const call = (method, url, body) => fetch(api + url, {
    method,
    headers: { Authorization: AUTH, Accept: 'application/json', ...(body ? { 'Content-Type': 'application/json' } : {}) },
    body,
  });

  start(process.env.HEUREKA_BIN, [
    `--server.port=${port}`, '--server.address=127.0.0.1',
    '--eureka.client.register-with-eureka=false', '--eureka.client.fetch-registry=false',
    `--eureka.client.service-url.defaultZone=${api}/`,
    `--spring.security.user.name=${USER}`, `--spring.security.user.password=${PASSWORD}`,
    // Spring shows the banner only 5 minutes after start; the test cannot wait that long.
    '--eureka.server.wait-time-in-ms-when-sync-empty=0',
    '--eureka.environment=browser-test',
    `--heureka.persistence.dir=${STORE}`,
    '--heureka.dns.enabled=true', `--heureka.dns.port=${dnsPort}`,
  ], 'heureka');
  for (let attempt = 0; ; attempt++) {
    try {
      if ((await call('GET', '/apps')).ok) break;
    } catch (error) { /* not listening yet */ }
    if (attempt > 100) throw new Error('heureka did not start');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  start(process.env.PYTHON, [process.env.PY_CLIENT,
    '--server', `http://${USER}:${PASSWORD}@127.0.0.1:${port}/eureka`,
    '--app', 'py-browser', '--port', String(clientPort), '--interval', '1',
    '--metadata', JSON.stringify({ zone: 'zone-a', team: 'payments' })], 'py-eureka-client');

  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  try {
    await step('without credentials the dashboard and its stream answer 401 with a Basic challenge', async () => {
      // A headless browser cannot show the prompt, so this is asked over plain HTTP.
      for (const url of [root + '/', api + '/events', api + '/dashboard/summary']) {
        const response = await fetch(url);
        assert.equal(response.status, 401, url);
        assert.match(response.headers.get('www-authenticate'), /^Basic /);
      }
    });

    const context = await browser.newContext({
      httpCredentials: { username: USER, password: PASSWORD },
      viewport: { width: 1280, height: 900 },
    });
    const page = await context.newPage();
    page.on('dialog', (dialog) => dialog.accept());
    page.on('pageerror', (error) => console.log(`\n  page error: ${error.message}`));
    // What the page's Content-Security-Policy blocked: Chromium reports each on the console.
    const blocked = [];
    page.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) blocked.push(message.text());
    });
    const row = (app) => page.locator(`#instances tr[data-app="${app}"]`);

    await step('instances registered by a real client appear', async () => {
      await page.goto(root + '/');
      await page.locator('#live', { hasText: 'live' }).waitFor({ timeout: 15000 });
      await row('PY-BROWSER').waitFor({ timeout: 30000 });
      await page.locator('#system-status', { hasText: 'browser-test' }).waitFor();
      // Kept on disk (heureka.persistence.dir): the system status says where.
      await page.locator('#persistence', { hasText: `on: ${STORE}/registry.redb` }).waitFor();
      // The other protocols: each on where it answers, or the key that turns it on.
      await page.locator('#system-status .fleet[data-key="heureka.prometheus-sd.enabled"]',
        { hasText: 'on: /eureka/prometheus/sd' }).waitFor();
      await page.locator('#system-status .fleet[data-key="heureka.dns.enabled"]',
        { hasText: `on: 127.0.0.1:${dnsPort}` }).waitFor();
      await page.locator('#system-status .fleet[data-key="heureka.xds.enabled"]',
        { hasText: 'off (heureka.xds.enabled)' }).waitFor();
      // A marker that a reload would wipe: every later change must arrive without one.
      await page.evaluate(() => { window.notReloaded = true; });
    });

    await step('the self-preservation banner shows with its numbers while renewals are below the threshold', async () => {
      const banner = page.locator('#self-preservation-warning .banner');
      await banner.waitFor({ timeout: 15000 });
      assert.equal(await banner.textContent(), EMERGENCY);
      const summary = await (await call('GET', '/dashboard/summary')).json();
      const numbers = await page.locator('#warning-numbers').textContent();
      assert.match(numbers, new RegExp(`threshold of ${summary.selfPreservation.renewsThreshold}\\b`));
      assert.match(numbers, /expected clients: \d+/);
      await shot(page, 'self-preservation-at-start');
    });

    await step('a registration made through the API appears without reload', async () => {
      for (const n of [1, 2, 3]) {
        const response = await call('POST', '/apps/API-ORDERS', JSON.stringify(instanceBody('api-orders', `orders-${n}`, 'zone-b')));
        assert.equal(response.status, 204);
      }
      await row('API-ORDERS').locator('.instance-link', { hasText: 'orders-3' }).waitFor({ timeout: 15000 });
      assert.equal(await page.evaluate(() => window.notReloaded), true);
      await shot(page, 'dashboard');
    });

    await step('the dashboard is not a consumer: a drain right after it opened waits for the real client only', async () => {
      const drain = await run(process.env.HEUREKA_BIN, ['drain', 'API-ORDERS', 'orders-2', '--timeout', '20',
        '--eureka', `http://${USER}:${PASSWORD}@127.0.0.1:${port}/eureka/`]);
      assert.equal(drain.code, 0, drain.stdout + drain.stderr);
      // The py-eureka-client, fetching every second, confirmed.
      assert.match(drain.stdout, /^confirmed\s+127\.0\.0\.1\s/m, drain.stdout);
      assert.doesNotMatch(drain.stdout, /Chrome|Mozilla/, drain.stdout);
      const doc = await (await call('GET', '/consumers')).json();
      const agents = [...doc.consumers, ...doc.readers].map((c) => c.agent);
      assert.ok(doc.consumers.length > 0 && !agents.some((a) => /Chrome|Mozilla/.test(a)), agents.join(', '));
      await page.locator('#consumers-table').waitFor();
      assert.doesNotMatch(await page.locator('#consumers').textContent(), /Chrome|Mozilla/);
    });

    await step('search and filters narrow the instances', async () => {
      await page.fill('#search', 'api-orders');
      await page.locator('#instances tbody tr').first().waitFor();
      assert.deepEqual(await page.locator('#instances tbody tr').evaluateAll((rows) => rows.map((r) => r.dataset.app)), ['API-ORDERS']);
      await page.fill('#search', 'team=payments');
      assert.deepEqual(await page.locator('#instances tbody tr').evaluateAll((rows) => rows.map((r) => r.dataset.app)), ['PY-BROWSER']);
      await shot(page, 'search');
      await page.fill('#search', '');
      await page.selectOption('#zone-filter', 'zone-b');
      assert.deepEqual(await page.locator('#instances tbody tr').evaluateAll((rows) => rows.map((r) => r.dataset.app)), ['API-ORDERS']);
      await page.selectOption('#zone-filter', '');
      await page.selectOption('#status-filter', 'DOWN');
      assert.equal(await page.locator('#instances tbody', { hasText: 'No instances match' }).count(), 1);
      await page.selectOption('#status-filter', '');
    });

    await step('an action changes the status and the page updates by itself', async () => {
      const bright = await bottomBrightness(page);
      await row('PY-BROWSER').locator('.instance-link').first().click();
      await page.locator('#detail[open]').waitFor();
      // The page behind the instance view is dimmed down to its bottom, not just the viewport.
      assert.ok(await page.evaluate(() => document.documentElement.scrollHeight > window.innerHeight + 100), 'a long page');
      const dimmed = await bottomBrightness(page);
      assert.ok(dimmed < bright * 0.8, `the bottom of the page is dimmed (${Math.round(dimmed)} against ${Math.round(bright)})`);
      await page.locator('#detail-metadata', { hasText: 'payments' }).waitFor();
      await page.click('#detail-actions button[data-action="out-of-service"]');
      await page.locator('#detail-status', { hasText: 'OUT_OF_SERVICE' }).waitFor({ timeout: 15000 });
      await row('PY-BROWSER').locator('.group[data-status="OUT_OF_SERVICE"]').waitFor({ timeout: 15000 });
      const app = await (await call('GET', '/apps/PY-BROWSER')).json();
      assert.equal(app.application.instance[0].status, 'OUT_OF_SERVICE');
      await shot(page, 'instance-detail');
      await page.click('#detail-actions button[data-action="up"]');
      await row('PY-BROWSER').locator('.group[data-status="UP"]').waitFor({ timeout: 15000 });
      await page.keyboard.press('Escape');
      assert.equal(await page.evaluate(() => window.notReloaded), true);
    });

    await step('remove override and deregister go through the API and show live', async () => {
      await row('API-ORDERS').locator('.instance-link', { hasText: 'orders-1' }).click();
      await page.click('#detail-actions button[data-action="out-of-service"]');
      await page.locator('#detail-status', { hasText: 'OUT_OF_SERVICE' }).waitFor({ timeout: 15000 });
      await page.click('#detail-actions button[data-action="remove-override"]');
      await page.locator('#detail-status', { hasText: 'UNKNOWN' }).waitFor({ timeout: 15000 });
      await page.click('#detail-actions button[data-action="deregister"]');
      await page.locator('#detail-message', { hasText: 'no longer registered' }).waitFor({ timeout: 15000 });
      await page.keyboard.press('Escape');
      await row('API-ORDERS').locator('.instance-link', { hasText: 'orders-1' }).waitFor({ state: 'detached', timeout: 15000 });
    });

    await step('the banner leaves once a minute of renewals is above the threshold', async () => {
      // The renews bucket rolls 60 s after start; the client renews every second.
      await page.locator('#self-preservation-warning').waitFor({ state: 'detached', timeout: 120000 });
      assert.notEqual(Number(await page.locator('#renews-last-min').textContent()), 0);
    });

    await step('the banner comes back by itself with its numbers when renewals fall below the threshold', async () => {
      // Forty instances that never renew raise the expected renewals above what arrives.
      for (let n = 0; n < 40; n++) {
        const response = await call('POST', '/apps/BATCH', JSON.stringify(instanceBody('batch', `batch-${n}`, 'zone-c')));
        assert.equal(response.status, 204);
      }
      const banner = page.locator('#self-preservation-warning .banner');
      await banner.waitFor({ timeout: 15000 });
      assert.equal(await banner.textContent(), EMERGENCY);
      const summary = await (await call('GET', '/dashboard/summary')).json();
      const sp = summary.selfPreservation;
      assert.ok(sp.renewsLastMin <= sp.renewsThreshold, JSON.stringify(sp));
      await page.locator('#renews-threshold', { hasText: String(sp.renewsThreshold) }).waitFor({ timeout: 5000 });
      await page.locator('#warning-numbers', { hasText: `threshold of ${sp.renewsThreshold}` }).waitFor({ timeout: 5000 });
      assert.equal(await page.evaluate(() => window.notReloaded), true);
      await shot(page, 'self-preservation');
    });

    await step('lastn lists registered and cancelled leases', async () => {
      const lastn = await context.newPage();
      await lastn.goto(root + '/lastn');
      await lastn.locator('#lastn-cancelled', { hasText: 'API-ORDERS(orders-1)' }).waitFor({ timeout: 10000 });
      await lastn.locator('#lastn-registered', { hasText: 'PY-BROWSER(' }).waitFor();
      await shot(lastn, 'lastn');
      await lastn.close();
    });

    await step('the page runs under its Content-Security-Policy with nothing blocked, and Enter submits no filter', async () => {
      const response = await page.goto(root + '/');
      const policy = response.headers()['content-security-policy'];
      assert.match(policy, /default-src 'self'/);
      assert.doesNotMatch(policy, /unsafe-inline/);
      assert.equal(response.headers()['x-frame-options'], 'DENY');
      await row('PY-BROWSER').waitFor({ timeout: 15000 });
      await page.evaluate(() => { window.notReloaded = true; });
      await page.fill('#search', 'py-browser');
      await page.press('#search', 'Enter');
      assert.equal(await page.evaluate(() => window.notReloaded), true);
      await page.fill('#search', '');
      assert.deepEqual(blocked, []);
    });

    await step('a page opened later shows the recent history in Recent events', async () => {
      const fresh = await context.newPage();
      await fresh.goto(root + '/');
      const timeline = fresh.locator('#timeline');
      await timeline.locator('li[data-event="cancelled"]', { hasText: 'API-ORDERS orders-1' }).waitFor({ timeout: 15000 });
      await timeline.locator('li[data-event="registered"]', { hasText: 'API-ORDERS orders-3' }).waitFor();
      await timeline.locator('li[data-event="status-changed"]', { hasText: 'API-ORDERS orders-2 → OUT_OF_SERVICE (override)' }).waitFor();
      await fresh.close();
    });

    await step('a page on another site cannot write to the registry through the browser', async () => {
      // The attacker's page, served by the browser's router at an origin of its own, in the
      // context holding the operator's credentials.
      const attacker = await context.newPage();
      await attacker.route('http://attacker.test/**', (route) => route.fulfill({
        contentType: 'text/html',
        body: `<form id="f" method="post" enctype="text/plain" action="${api}/peerreplication/batch">
                 <input name='{"replicationList":[{"appName":"PY-BROWSER","id":"x","action":"Cancel","x":"' value='"}]}'>
               </form>`,
      }));
      // The registry, less what the real client's heartbeats move (its renewal times).
      const registry = async () => {
        const { applications } = await (await call('GET', '/apps')).json();
        return JSON.stringify([applications.apps__hashcode, applications.application.flatMap((app) => app.instance)
          .map((i) => [i.instanceId, i.status, i.overriddenstatus, i.metadata]).sort()]);
      };
      const before = await registry();
      await attacker.goto('http://attacker.test/');
      const statuses = await attacker.evaluate(async ({ api, body }) => {
        const send = (url, init) => fetch(api + url, { credentials: 'include', mode: 'no-cors', ...init })
          .then((r) => r.type, (e) => `failed: ${e.message}`);
        return [
          await send('/apps/API-ORDERS', { method: 'POST', headers: { 'Content-Type': 'text/plain' }, body }),
          await send('/apps/API-ORDERS', { method: 'POST', body }),
          await send('/apps/PY-BROWSER/' + 'x/status?value=OUT_OF_SERVICE', { method: 'PUT' }),
        ];
      }, { api, body: JSON.stringify(instanceBody('api-orders', 'forged', 'zone-b')) });
      const refused = attacker.waitForResponse((r) => r.url().endsWith('/peerreplication/batch'));
      await attacker.evaluate(() => document.getElementById('f').submit());
      assert.ok([403, 415].includes((await refused).status()), 'the form post is refused');
      assert.equal(await registry(), before, `the registry changed (${statuses})`);
      await attacker.close();
    });

    await step('a page whose name is rebound to the registry can neither read nor write it', async () => {
      // DNS rebinding: the attacker's page is served under its own name, which then resolves
      // to the registry (Chromium's resolver rules play the attacker's DNS; the browser's
      // router serves the page). Over plain HTTP the page's reads carry no Origin and no
      // Sec-Fetch-*, so what the server has to go on is the Host and the browser's own headers.
      // Chromium's Local Network Access checks, which would stop this page's requests to
      // loopback on their own, are off: the browser played is one without them (Firefox,
      // Safari, older Chromium), which leaves the server to refuse.
      const rebinding = await chromium.launch({
        executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
        headless: true,
        args: ['--no-sandbox', '--disable-gpu', '--host-resolver-rules=MAP rebind.test 127.0.0.1',
          '--disable-features=LocalNetworkAccessChecks'],
      });
      try {
        const operator = await rebinding.newContext({ httpCredentials: { username: USER, password: PASSWORD } });
        const origin = `http://rebind.test:${port}`;
        const attacker = await operator.newPage();
        await attacker.route(origin + '/', (route) => route.fulfill({ contentType: 'text/html', body: '<title>rebound</title>' }));
        await attacker.goto(origin + '/');
        const [read, reason, write] = await attacker.evaluate(async () => {
          const apps = await fetch('/eureka/apps', { headers: { Accept: 'application/json', 'Accept-Language': '*' } });
          const override = await fetch('/eureka/apps/PY-BROWSER/x/status?value=OUT_OF_SERVICE', { method: 'PUT' });
          return [apps.status, await apps.text(), override.status];
        });
        assert.equal(read, 403, reason);
        assert.match(reason, /DNS rebinding refused/);
        assert.equal(write, 403);
        // The dashboard opened under that name is refused as well; under 127.0.0.1 it works (above).
        const dashboard = await operator.newPage();
        assert.equal((await dashboard.goto(origin + '/')).status(), 403);
      } finally {
        await rebinding.close();
      }
    });

    await step('an instance the health checks find failing shows DOWN, and its view says why', async () => {
      // A second server with checks on, so the first one's instances (which serve no health
      // endpoint) keep the statuses the steps above expect.
      const checkedPort = await freePort();
      const checked = `http://127.0.0.1:${checkedPort}`;
      start(process.env.HEUREKA_BIN, [
        `--server.port=${checkedPort}`, '--server.address=127.0.0.1',
        '--eureka.client.register-with-eureka=false', '--eureka.client.fetch-registry=false',
        `--eureka.client.service-url.defaultZone=${checked}/eureka/`,
        `--spring.security.user.name=${USER}`, `--spring.security.user.password=${PASSWORD}`,
        '--heureka.health-checks.enabled=true', '--heureka.health-checks.interval=200ms',
        '--heureka.health-checks.jitter=0',
      ], 'heureka-checked');
      // An instance whose port nothing listens on: it has crashed.
      const body = JSON.stringify(instanceBody('crashed', 'crashed-1', 'zone-a'))
        .replace('"$":9000', `"$":${await freePort()}`);
      for (let attempt = 0; ; attempt++) {
        try {
          const response = await fetch(`${checked}/eureka/apps/CRASHED`, {
            method: 'POST', body,
            headers: { Authorization: AUTH, 'Content-Type': 'application/json' },
          });
          if (response.status === 204) break;
        } catch (error) { /* not listening yet */ }
        if (attempt > 100) throw new Error('the second heureka did not start');
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      await page.goto(checked + '/');
      await page.locator('#instances tr[data-app="CRASHED"]', { hasText: 'DOWN' }).waitFor({ timeout: 15000 });
      await page.locator('#instances tr[data-app="CRASHED"] .instance-link').first().click();
      await page.locator('#detail[open]').waitFor();
      await page.locator('#detail-status', { hasText: 'DOWN' }).waitFor();
      await page.locator('#detail-health', { hasText: 'FAILING' }).waitFor({ timeout: 15000 });
      assert.match(await page.locator('#detail-health').textContent(), /connect 127\.0\.0\.1:\d+/);
      await shot(page, 'health-check-failing');
      await page.keyboard.press('Escape');

      // An instance that claims the cloud's metadata address is not probed, and says why.
      const metadata = JSON.stringify(instanceBody('claims', 'claims-1', 'zone-a')).replaceAll('127.0.0.1', '169.254.169.254');
      const registered = await fetch(`${checked}/eureka/apps/CLAIMS`, {
        method: 'POST', body: metadata,
        headers: { Authorization: AUTH, 'Content-Type': 'application/json' },
      });
      assert.equal(registered.status, 204);
      // The instance view reads the probes when it opens: open it once a round has refused it.
      for (let attempt = 0; ; attempt++) {
        const view = await (await fetch(`${checked}/eureka/dashboard/health-checks`, { headers: { Authorization: AUTH } })).text();
        if (view.includes('"refused":true')) break;
        if (attempt > 100) throw new Error(`claims-1 was never refused: ${view}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      await page.locator('#instances tr[data-app="CLAIMS"] .instance-link').first().click();
      await page.locator('#detail[open]').waitFor();
      await page.locator('#detail-health', { hasText: 'refused' }).waitFor({ timeout: 15000 });
      assert.match(await page.locator('#detail-health').textContent(), /169\.254\.169\.254 is outside heureka\.health-checks\.allowed-networks/);
      await page.locator('#detail-status', { hasText: 'UP' }).waitFor();
      await page.keyboard.press('Escape');
    });

    await step('a server without remote regions shows no Regions panel', async () => {
      const read = page.waitForResponse((r) => r.url() === `${api}/regions`, { timeout: 15000 });
      await page.goto(root + '/');
      const response = await read;
      assert.equal(response.status(), 200);
      // Marked as the dashboard's, like its registry reads: an operator's page is no consumer.
      assert.equal(response.request().headers()['x-heureka-dashboard'], '1');
      await row('PY-BROWSER').waitFor({ timeout: 15000 });
      assert.equal(await page.locator('#regions-panel').isHidden(), true);
    });

    await step('a remote region shows ready with its instances, then stale and dropped once it stops', async () => {
      // The remote region: a second server with two instances of its own.
      const westPort = await freePort();
      const west = `http://127.0.0.1:${westPort}/eureka`;
      const remote = startServer(westPort, 'heureka-us-west');
      await untilStarted(west);
      for (const n of [1, 2]) {
        const response = await fetch(`${west}/apps/WEST-ORDERS`, {
          method: 'POST', body: JSON.stringify(instanceBody('west-orders', `west-${n}`, 'us-west-1a')),
          headers: { Authorization: AUTH, 'Content-Type': 'application/json' },
        });
        assert.equal(response.status, 204);
      }
      // The server the dashboard is opened on fetches it every second, with the credentials
      // in its URL, and stops serving it 4 s after its last success.
      const eastPort = await freePort();
      const east = `http://127.0.0.1:${eastPort}`;
      startServer(eastPort, 'heureka-us-east', [
        '--eureka.client.region=us-east-1',
        `--eureka.server.remote-region-urls-with-name.us-west=http://${USER}:${PASSWORD}@127.0.0.1:${westPort}/eureka/`,
        '--eureka.server.remote-region-registry-fetch-interval=1',
        '--heureka.regions.stale-after=4s',
      ]);
      await untilStarted(`${east}/eureka`);
      // The page's clock is Playwright's, so that its timers can be stopped below.
      await page.clock.install();
      await page.goto(east + '/');
      await page.evaluate(() => { window.notReloaded = true; });
      const region = page.locator('#regions-table tr[data-region="us-west"]');
      await region.locator('td[data-state="ready"]').waitFor({ timeout: 15000 });
      await region.locator('td[data-field="instances"]', { hasText: /^2$/ }).waitFor({ timeout: 15000 });
      assert.equal(await region.locator('td[data-field="applications"]').textContent(), '1');
      assert.match(await region.locator('td[data-field="last-success"]').textContent(), /s ago\)$/);
      assert.match(await region.locator('td[data-field="lag"]').textContent(), /s \(dropped after 4\.0 s\)$/);
      // The URL as /regions gives it: without the credentials it was configured with.
      const panel = await page.locator('#regions-panel').textContent();
      assert.ok(panel.includes(`http://127.0.0.1:${westPort}/eureka/`), panel);
      assert.doesNotMatch(panel, new RegExp(PASSWORD));
      assert.match(panel, /This region: us-east-1/);

      // From here the page's timers stand still (no 15 s re-read): only the event stream can
      // bring the region's next states.
      await page.clock.pauseAt(Date.now() + 1000);
      remote.kill('SIGTERM');
      await region.locator('td[data-state="stale"]').waitFor({ timeout: 15000 });
      await page.locator('#regions-table tr[data-region-error="us-west"]', { hasText: 'Last fetch failed' }).waitFor({ timeout: 15000 });
      // Told by the stream: its event is in Recent events, and the page was not reloaded.
      await page.locator('#timeline li[data-event="region-stale"]', { hasText: 'us-west' }).waitFor({ timeout: 15000 });
      await shot(page, 'regions');
      await region.locator('td[data-state="dropped"]').waitFor({ timeout: 20000 });
      await region.locator('td[data-field="instances"]', { hasText: /^0$/ }).waitFor({ timeout: 15000 });
      await page.locator('#timeline li[data-event="region-dropped"]', { hasText: 'us-west' }).waitFor({ timeout: 15000 });
      assert.equal(await page.evaluate(() => window.notReloaded), true);
      assert.deepEqual(blocked, []);
    });

    await step('inside a namespace the page shows its instances only, and the switcher goes to another', async () => {
      // The same application in two namespaces, registered over HTTP at /ns/{name}/eureka.
      const register = (namespace, id) => fetch(`${root}/ns/${namespace}/eureka/apps/SHOP`, {
        method: 'POST',
        headers: { Authorization: AUTH, 'Content-Type': 'application/json' },
        body: JSON.stringify(instanceBody('shop', id, 'zone-a')),
      });
      for (const [namespace, id] of [['team-a', 'shop-a1'], ['team-a', 'shop-a2'], ['team-b', 'shop-b1']]) {
        assert.equal((await register(namespace, id)).status, 204, `${namespace} ${id}`);
      }
      // A context of its own: the one above has its clock paused (the regions' step).
      const own = await browser.newContext({
        httpCredentials: { username: USER, password: PASSWORD },
        viewport: { width: 1280, height: 900 },
      });
      const teamA = await own.newPage();
      teamA.on('console', (message) => {
        if (/Content Security Policy/i.test(message.text())) blocked.push(message.text());
      });
      await teamA.goto(`${root}/ns/team-a/`);
      const shop = teamA.locator('#instances tr[data-app="SHOP"]');
      await shop.locator('.instance-link', { hasText: 'shop-a2' }).waitFor({ timeout: 15000 });
      await teamA.locator('#live', { hasText: 'live' }).waitFor({ timeout: 15000 });
      assert.equal(await teamA.locator('#namespace').textContent(), 'team-a');
      assert.deepEqual(await shop.locator('.instance-link').allTextContents(), ['shop-a1', 'shop-a2']);
      assert.equal(await teamA.locator('#instances tr[data-app="PY-BROWSER"]').count(), 0);

      // Live, through team-a's stream: its own registration shows, team-b's does not.
      assert.equal((await register('team-b', 'shop-b2')).status, 204);
      assert.equal((await register('team-a', 'shop-a3')).status, 204);
      await shop.locator('.instance-link', { hasText: 'shop-a3' }).waitFor({ timeout: 15000 });
      assert.deepEqual(await shop.locator('.instance-link').allTextContents(), ['shop-a1', 'shop-a2', 'shop-a3']);

      // The switcher lists every namespace, this one chosen; the overview has their counts.
      await teamA.locator('#namespaces tr[data-namespace="team-b"] td[data-field="instances"]', { hasText: /^2$/ })
        .waitFor({ timeout: 20000 });
      assert.deepEqual(await teamA.locator('#namespace-switcher option').allTextContents(), ['default', 'team-a', 'team-b']);
      assert.equal(await teamA.locator('#namespace-switcher').inputValue(), 'team-a');
      await teamA.locator('#namespaces tr[data-namespace="team-a"] td[data-field="instances"]', { hasText: /^3$/ })
        .waitFor({ timeout: 20000 });
      assert.equal(await teamA.locator('#namespaces tr[data-namespace="team-a"] td[data-field="self-preservation"]').count(), 1);
      await shot(teamA, 'namespace');

      await Promise.all([teamA.waitForURL(`${root}/ns/team-b/`), teamA.selectOption('#namespace-switcher', 'team-b')]);
      await shop.locator('.instance-link', { hasText: 'shop-b2' }).waitFor({ timeout: 15000 });
      assert.deepEqual(await shop.locator('.instance-link').allTextContents(), ['shop-b1', 'shop-b2']);
      assert.equal(await teamA.locator('#namespace').textContent(), 'team-b');

      // Its lastn is its own as well.
      await teamA.goto(`${root}/ns/team-b/lastn`);
      await teamA.locator('#lastn-registered', { hasText: 'SHOP(shop-b1)' }).waitFor({ timeout: 15000 });
      assert.doesNotMatch(await teamA.locator('#lastn-registered').textContent(), /shop-a|PY-BROWSER/);

      // And default is the unprefixed page.
      await teamA.goto(`${root}/ns/team-b/`);
      await teamA.locator('#namespaces tr[data-namespace="default"]').waitFor({ timeout: 15000 });
      await Promise.all([teamA.waitForURL(`${root}/`), teamA.selectOption('#namespace-switcher', 'default')]);
      await teamA.locator('#instances tr[data-app="PY-BROWSER"]').waitFor({ timeout: 15000 });
      assert.equal(await shop.count(), 0);
      assert.deepEqual(blocked, []);
      await own.close();
    });

    await step('the page is readable on a phone', async () => {
      const phone = await browser.newContext({
        httpCredentials: { username: USER, password: PASSWORD },
        viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true,
      });
      const small = await phone.newPage();
      await small.goto(root + '/');
      await small.locator('#instances tr[data-app="PY-BROWSER"]').waitFor({ timeout: 15000 });
      const width = await small.evaluate(() => document.documentElement.scrollWidth);
      assert.ok(width <= 390 + 1, `no horizontal scrolling on a phone (page is ${width}px wide)`);
      await shot(small, 'phone');
      await phone.close();
    });
  } finally {
    await browser.close();
  }
  console.log(`dashboard browser test: ${passed} passed`);
}

// Another heureka on 127.0.0.1 with the test's credentials, neither registering nor fetching.
function startServer(port, name, extra = []) {
  return start(process.env.HEUREKA_BIN, [
    `--server.port=${port}`, '--server.address=127.0.0.1',
    '--eureka.client.register-with-eureka=false', '--eureka.client.fetch-registry=false',
    `--eureka.client.service-url.defaultZone=http://127.0.0.1:${port}/eureka/`,
    `--spring.security.user.name=${USER}`, `--spring.security.user.password=${PASSWORD}`,
    ...extra,
  ], name);
}

// Until the server at `api` answers a read (bounded: 10 s).
async function untilStarted(api) {
  for (let attempt = 0; ; attempt++) {
    try {
      if ((await fetch(`${api}/apps`, { headers: { Authorization: AUTH, Accept: 'application/json' } })).ok) return;
    } catch (error) { /* not listening yet */ }
    if (attempt > 100) throw new Error(`${api} did not start`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function instanceBody(app, id, zone) {
  return {
    instance: {
      instanceId: id, app: app.toUpperCase(), hostName: '127.0.0.1', ipAddr: '127.0.0.1',
      status: 'UP', port: { $: 9000, '@enabled': 'true' }, vipAddress: app,
      statusPageUrl: 'http://127.0.0.1:9000/actuator/info',
      dataCenterInfo: { '@class': 'com.netflix.appinfo.InstanceInfo$DefaultDataCenterInfo', name: 'MyOwn' },
      leaseInfo: { renewalIntervalInSecs: 30, durationInSecs: 90 },
      metadata: { zone },
    },
  };
}

function stopAll() {
  for (const child of children) {
    if (child.exitCode === null) child.kill('SIGTERM');
  }
}

main().then(() => {
  stopAll();
  process.exit(0);
}, (error) => {
  console.log('FAILED');
  console.error(error);
  for (const child of children) {
    console.error(`--- last output of ${child.label} ---\n${child.log.join('').slice(-4000)}`);
  }
  stopAll();
  process.exit(1);
});
