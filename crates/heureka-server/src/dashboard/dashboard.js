// Heureka's dashboard: vanilla JavaScript, no build step, no network beyond this server.
//
// Loads the registry once ({base}/apps, JSON), then applies the event stream ({base}/events)
// to it: no reload, no polling of the registry. The stream is opened first and events that
// arrive while the registry loads are applied after it, in order, so nothing is missed. On
// `lagged` (the stream dropped events for this page, or it reconnected) the page loads once
// more. Actions are the ordinary REST calls; with auth on, the browser sends the Basic
// credentials it was asked for when the page loaded. Its reads say they are the dashboard's
// (X-Heureka-Dashboard): an operator's page is not a consumer of the registry, and a drain
// must not wait for it.
//
// Each namespace serves this page under its own path ({prefix}/{name}/) with BASE its own
// API: the page shows that namespace alone, and lists the namespaces ({prefix}) to switch.
'use strict';

const BASE = document.body.dataset.base;
const HOME = document.body.dataset.home;
const LASTN = document.body.dataset.lastn;
// The namespace this page shows, the dashboard's path within one, and heureka.namespaces.path-prefix.
const NAMESPACE = document.body.dataset.namespace;
const PATH = document.body.dataset.path;
const NAMESPACES = document.body.dataset.namespaces;

// Spring Cloud Netflix's dashboard warnings, word for word.
const WARNINGS = {
  emergency: "EMERGENCY! EUREKA MAY BE INCORRECTLY CLAIMING INSTANCES ARE UP WHEN THEY'RE NOT. RENEWALS ARE LESSER THAN THRESHOLD AND HENCE THE INSTANCES ARE NOT BEING EXPIRED JUST TO BE SAFE.",
  belowAndOff: 'RENEWALS ARE LESSER THAN THE THRESHOLD. THE SELF PRESERVATION MODE IS TURNED OFF. THIS MAY NOT PROTECT INSTANCE EXPIRY IN CASE OF NETWORK/OTHER PROBLEMS.',
  off: 'THE SELF PRESERVATION MODE IS TURNED OFF. THIS MAY NOT PROTECT INSTANCE EXPIRY IN CASE OF NETWORK/OTHER PROBLEMS.',
};

const EVENT_NAMES = ['registered', 'cancelled', 'evicted', 'status-changed', 'metadata-changed',
  'renewals', 'self-preservation-entered', 'self-preservation-left', 'peer-up', 'peer-down', 'audit', 'lagged',
  'health-check-failed', 'health-check-recovered', 'health-checks-suspended', 'health-checks-resumed',
  'region-ready', 'region-stale', 'region-dropped'];
// Rows of the "Recent administrative actions" table; the server keeps more (heureka.audit.retained).
const AUDIT_ROWS = 50;

const state = {
  instances: new Map(), // "APP/id" -> instance, as /apps encodes it
  summary: null,
  status: null,
  clockOffset: 0, // server time minus browser time
  loading: false,
  buffered: [],
  detailKey: null,
  audit: [], // {base}/dashboard/audit's entries, newest first, then the stream's `audit` events
  healthChecks: null, // {base}/dashboard/health-checks: this node's probes and the guard
  consumers: null, // {base}/consumers: who fetches the registry from this node
  regions: null, // {base}/regions: the remote regions this node fetches and serves
  history: null, // keys of the entries "Recent events" was opened with, once shown
  namespaces: null, // {prefix}: the namespaces this user may use, with their counts
};

// --- small helpers ------------------------------------------------------------------------

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name === 'className') node.className = value;
    else if (name.startsWith('on')) node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, value === true ? '' : value);
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

function rows(table, pairs) {
  table.replaceChildren(...pairs.map(([key, value]) => el('tr', {}, el('td', {}, key), el('td', {}, value))));
}

async function getJson(path) {
  const response = await fetch(BASE + path, {
    headers: { Accept: 'application/json', 'X-Heureka-Dashboard': '1' },
    cache: 'no-store',
  });
  if (!response.ok) throw new Error(`${path}: ${response.status}`);
  return response.json();
}

const pad = (n, width = 2) => String(n).padStart(width, '0');

// Spring's format, yyyy-MM-dd'T'HH:mm:ss Z, in the browser's time zone.
function formatTime(ms) {
  if (!ms) return '—';
  const d = new Date(ms);
  const offset = -d.getTimezoneOffset();
  const sign = offset >= 0 ? '+' : '-';
  const zone = sign + pad(Math.floor(Math.abs(offset) / 60)) + pad(Math.abs(offset) % 60);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())} ${zone}`;
}

// Spring's uptime: HH:mm, prefixed with "1 day " or "N days ".
function formatUptime(ms) {
  const minutes = Math.max(0, Math.floor(ms / 60000));
  const days = Math.floor(minutes / 1440);
  const prefix = days === 0 ? '' : days === 1 ? '1 day ' : `${days} days `;
  return prefix + pad(Math.floor((minutes % 1440) / 60)) + ':' + pad(minutes % 60);
}

const serverNow = () => Date.now() + state.clockOffset;
const asList = (value) => (Array.isArray(value) ? value : value ? [value] : []);
const keyOf = (app, id) => `${app}/${id}`;
const idOf = (instance) => instance.instanceId || instance.hostName;

function metadataOf(instance) {
  const metadata = Object.assign({}, instance.metadata || {});
  delete metadata['@class'];
  return metadata;
}

function zoneOf(instance) {
  const dc = (instance.dataCenterInfo && instance.dataCenterInfo.metadata) || {};
  return dc['availability-zone'] || metadataOf(instance).zone || null;
}

function amiOf(instance) {
  const dc = (instance.dataCenterInfo && instance.dataCenterInfo.metadata) || {};
  return dc['ami-id'] || null;
}

// --- loading --------------------------------------------------------------------------------

async function loadAll() {
  state.loading = true;
  try {
    const [apps, summary] = await Promise.all([getJson('/apps'), getJson('/dashboard/summary')]);
    state.instances.clear();
    for (const app of asList(apps.applications && apps.applications.application)) {
      for (const instance of asList(app.instance)) {
        state.instances.set(keyOf(instance.app, idOf(instance)), instance);
      }
    }
    state.summary = summary;
    // Only an admin may take the actions; the server refuses them to others anyway (403).
    document.getElementById('detail-actions').hidden = !(summary.may && summary.may.admin);
    state.clockOffset = summary.now - Date.now();
    await loadStatus();
    state.audit = (await getJson('/dashboard/audit')).entries;
    await loadHealthChecks();
    if (!state.history) await showHistory();
  } catch (error) {
    document.getElementById('warnings').replaceChildren(el('div', { className: 'warning' }, `Could not load the registry: ${error.message}`));
  } finally {
    state.loading = false;
  }
  const buffered = state.buffered.splice(0);
  for (const [name, data] of buffered) apply(name, data);
  renderAll();
}

async function loadStatus() {
  try {
    state.status = await getJson('/status');
  } catch (error) {
    state.status = null;
  }
  renderReplicas();
  renderGeneralInfo();
  await loadConsumers();
  await loadRegions();
  await loadNamespaces();
}

// Who fetches the registry: read with the status (a fetch is no event), and every 15 s.
async function loadConsumers() {
  try {
    state.consumers = await getJson('/consumers');
  } catch (error) {
    state.consumers = null;
  }
  renderConsumers();
}

// The clients that fetch periodically (what a drain waits for), each following the push or
// fetching, then the one-off readers apart
// (a curl, a probe, `heureka apps`: never waited for, and always behind sooner or later).
function renderConsumers() {
  const box = document.getElementById('consumers');
  const doc = state.consumers;
  const readers = (doc && doc.readers) || [];
  if (!doc || (doc.consumers.length === 0 && readers.length === 0)) {
    box.replaceChildren(el('p', { className: 'muted' }, 'No client has fetched the registry from this server lately.'));
    return;
  }
  const ago = (ms) => (ms ? `${Math.max(0, Math.round((doc.now - ms) / 1000))} s ago` : '—');
  const clients = doc.consumers.length === 0
    ? el('p', { className: 'muted' }, 'No client that fetches periodically has fetched the registry from this server lately.')
    : el('div', { className: 'scroll' }, el('table', { className: 'list', id: 'consumers-table' },
      el('thead', {}, el('tr', {}, ['Address', 'Client', 'Follows', 'Last full', 'Last delta', 'Behind'].map((h) => el('th', {}, h)))),
      el('tbody', {}, doc.consumers.map((c) => el('tr', { 'data-consumer': `${c.address} ${c.agent}` },
        el('td', {}, c.address), el('td', {}, c.agent),
        el('td', { title: c.push ? 'a push stream of it is open (docs/push.md)' : 'it fetches the registry' }, c.push ? 'push' : 'fetch'),
        el('td', {}, ago(c.lastFull)), el('td', {}, ago(c.lastDelta)),
        el('td', { className: c.behind > 0 ? 'peer-down' : 'peer-up' }, c.behind > 0 ? `${c.behind} versions` : 'current'))))));
  const oneOff = readers.length === 0 ? null : el('details', { id: 'readers' },
    el('summary', {}, `${readers.length} one-off read${readers.length === 1 ? '' : 's'}, not waited for by a drain (no Eureka client, no steady pace)`),
    el('div', { className: 'scroll' }, el('table', { className: 'list', id: 'readers-table' },
      el('thead', {}, el('tr', {}, ['Address', 'Client', 'Last read'].map((h) => el('th', {}, h)))),
      el('tbody', {}, readers.map((r) => el('tr', { 'data-reader': `${r.address} ${r.agent}` },
        el('td', {}, r.address), el('td', {}, r.agent), el('td', {}, ago(r.lastFetch))))))));
  box.replaceChildren(clients, oneOff);
}

// The namespaces (GET {prefix}): the switcher and the overview, read with the status and every
// 15 s (a count is no event of this namespace's stream).
async function loadNamespaces() {
  try {
    const response = await fetch(NAMESPACES, { headers: { Accept: 'application/json', 'X-Heureka-Dashboard': '1' }, cache: 'no-store' });
    state.namespaces = response.ok ? (await response.json()).namespaces : null;
  } catch (error) {
    state.namespaces = null;
  }
  renderNamespaces();
}

// Where namespace `name`'s dashboard is: the unprefixed page for `default`.
function namespaceHome(name) {
  if (name === 'default') return PATH;
  return `${NAMESPACES}/${encodeURIComponent(name)}${PATH === '/' ? '/' : PATH}`;
}

function renderNamespaces() {
  const listed = state.namespaces || [];
  // This page's namespace is in the switcher even before its first registration creates it.
  const names = listed.map((n) => n.name);
  if (!names.includes(NAMESPACE)) names.push(NAMESPACE);
  const select = document.getElementById('namespace-switcher');
  select.replaceChildren(...names.sort().map((name) => el('option', { value: name, selected: name === NAMESPACE }, name)));
  select.value = NAMESPACE;
  const panel = document.getElementById('namespaces-panel');
  panel.hidden = listed.length === 0;
  document.querySelector('#namespaces tbody').replaceChildren(...listed.map((n) => el('tr',
    { 'data-namespace': n.name, className: n.name === NAMESPACE ? 'current' : null },
    el('td', {}, el('a', { href: namespaceHome(n.name) }, n.name)),
    el('td', { 'data-field': 'applications' }, n.applications),
    el('td', { 'data-field': 'instances' }, n.instances),
    el('td', { 'data-field': 'renews', title: `threshold ${n.renewsThreshold}` }, `${n.renewsLastMin} (threshold ${n.renewsThreshold})`),
    el('td', { 'data-field': 'self-preservation', className: n.selfPreservation ? 'bad' : null },
      n.selfPreservation ? 'active' : 'inactive'))));
}

// The remote regions (docs/regions.md): read with the status, on each region event, and with
// the consumers every 15 s (a fetch that succeeded moves the lag and counts, and is no event).
async function loadRegions() {
  try {
    state.regions = await getJson('/regions');
  } catch (error) {
    state.regions = null;
  }
  renderRegions();
}

const secondsText = (ms) => (ms < 10000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms / 1000)} s`);

// A region's last success as an age, moving with the page's clock between reads.
function regionAge(lastSuccess) {
  return lastSuccess ? `${formatTime(lastSuccess)} (${secondsText(Math.max(0, serverNow() - lastSuccess))} ago)` : 'never';
}

// Shown only when this server has regions: a server without them has nothing to say here.
function renderRegions() {
  const panel = document.getElementById('regions-panel');
  const regions = (state.regions && state.regions.regions) || [];
  panel.hidden = regions.length === 0;
  if (regions.length === 0) return;
  const doc = state.regions;
  const head = el('p', { className: 'muted' }, `This region: ${doc.region || '—'}; `,
    doc.fallback ? 'reads without regions= fall back to the regions' : 'reads without regions= serve this region only');
  const columns = ['Region', 'URL', 'State', 'Applications', 'Instances', 'Last success', 'Lag', 'Fetches'];
  const body = regions.flatMap((r) => {
    const fetches = r.fetches || {};
    const row = el('tr', { 'data-region': r.name },
      el('td', {}, el('b', {}, r.name)),
      el('td', {}, r.url),
      el('td', { className: `region-${r.state}`, 'data-state': r.state }, r.state),
      el('td', { 'data-field': 'applications' }, r.applications),
      el('td', { 'data-field': 'instances' }, r.instances),
      el('td', { 'data-field': 'last-success', 'data-since': r.lastSuccess || '' }, regionAge(r.lastSuccess)),
      el('td', { 'data-field': 'lag', title: 'since the last successful fetch, when it was read' },
        r.lagMs === null || r.lagMs === undefined ? '—' : `${secondsText(r.lagMs)} (dropped after ${secondsText(r.staleAfterMs)})`),
      el('td', {}, `${fetches.full || 0} full, ${fetches.delta || 0} delta, ${fetches.mismatches || 0} mismatches, ${fetches.failures || 0} failed`));
    const error = r.error
      ? el('tr', { className: 'region-error', 'data-region-error': r.name }, el('td', { colspan: columns.length }, `Last fetch failed: ${r.error}`))
      : null;
    return [row, error];
  });
  document.getElementById('regions').replaceChildren(head, el('div', { className: 'scroll' }, el('table', { className: 'list', id: 'regions-table' },
    el('thead', {}, el('tr', {}, columns.map((h) => el('th', {}, h)))),
    el('tbody', {}, body))));
}

function tickRegionAges() {
  for (const cell of document.querySelectorAll('#regions-table td[data-since]')) {
    cell.textContent = regionAge(Number(cell.dataset.since) || null);
  }
}

// This node's latest probes: read on load, on a verdict or the guard changing, and while the
// instance view is open (a probe's latency and time move every interval; no event carries them).
async function loadHealthChecks() {
  try {
    state.healthChecks = await getJson('/dashboard/health-checks');
  } catch (error) {
    state.healthChecks = null;
  }
}

// --- the event stream -----------------------------------------------------------------------

function openStream() {
  const live = document.getElementById('live');
  const stream = new EventSource(BASE + '/events');
  let loaded = false;
  stream.onopen = () => {
    live.textContent = 'live';
    live.classList.remove('off');
    if (!loaded) {
      loaded = true;
      loadAll();
    }
  };
  stream.onerror = () => {
    // EventSource reconnects by itself; the server then sends `lagged` and the page reloads.
    live.textContent = 'reconnecting…';
    live.classList.add('off');
    // A refusal (429: the server's stream budget is spent) closes an EventSource for good;
    // open a new one after the server's Retry-After, as it would have reconnected itself.
    if (stream.readyState === EventSource.CLOSED) setTimeout(openStream, 10000);
  };
  for (const name of EVENT_NAMES) {
    stream.addEventListener(name, (message) => {
      const data = JSON.parse(message.data);
      if (state.loading) state.buffered.push([name, data]);
      else {
        apply(name, data);
        scheduleRender();
      }
    });
  }
}

function apply(name, data) {
  switch (name) {
    case 'registered':
    case 'status-changed':
    case 'metadata-changed':
      if (data.instance) state.instances.set(keyOf(data.app, data.id), data.instance);
      break;
    case 'health-check-failed':
    case 'health-check-recovered':
      if (data.instance) state.instances.set(keyOf(data.app, data.id), data.instance);
      loadHealthChecks().then(scheduleRender);
      break;
    case 'health-checks-suspended':
    case 'health-checks-resumed':
      loadHealthChecks().then(scheduleRender);
      break;
    case 'cancelled':
    case 'evicted':
      state.instances.delete(keyOf(data.app, data.id));
      break;
    case 'renewals':
    case 'self-preservation-entered':
    case 'self-preservation-left':
      if (state.summary) state.summary.selfPreservation = data.selfPreservation;
      break;
    case 'peer-up':
    case 'peer-down':
      loadStatus();
      break;
    case 'region-ready':
    case 'region-stale':
    case 'region-dropped':
      loadRegions();
      break;
    case 'audit':
      state.audit.unshift(data);
      state.audit.length = Math.min(state.audit.length, AUDIT_ROWS);
      return;
    case 'lagged':
      if (!state.loading) loadAll();
      return;
  }
  if (name !== 'renewals') addToTimeline(name, data);
}

let renderPending = false;
function scheduleRender() {
  if (renderPending) return;
  renderPending = true;
  requestAnimationFrame(() => {
    renderPending = false;
    renderAll();
  });
}

// --- rendering ------------------------------------------------------------------------------

function renderAll() {
  renderWarnings();
  renderSystemStatus();
  renderSelfPreservation();
  renderInstances();
  renderInstanceInfo();
  renderAudit();
  if (state.detailKey) renderDetail();
}

function formula(sp) {
  const perMinute = 60 / sp.expectedClientRenewalIntervalSeconds;
  return `floor(${sp.expectedClients} × ${perMinute} × ${sp.renewalPercentThreshold}) = ${sp.renewsThreshold}`;
}

function healthChecksWarning() {
  const checks = state.healthChecks;
  if (!checks || !checks.suspended) return null;
  return el('div', { className: 'warning', id: 'health-checks-warning' },
    el('p', { className: 'banner' }, 'HEALTH CHECKS SUSPENDED: NO INSTANCE IS MARKED DOWN BY THIS SERVER.'),
    el('p', { className: 'why' }, `${checks.reason}. They resume by themselves once most probes pass again; check this server's network (heureka.health-checks.self-suspicion-percent).`));
}

function renderWarnings() {
  const box = document.getElementById('warnings');
  const sp = state.summary && state.summary.selfPreservation;
  const checks = healthChecksWarning();
  if (!sp) return box.replaceChildren(...(checks ? [checks] : []));
  let text = null;
  if (sp.belowRenewThreshold) text = sp.enabled ? WARNINGS.emergency : WARNINGS.belowAndOff;
  else if (!sp.enabled) text = WARNINGS.off;
  if (!text) return box.replaceChildren(...(checks ? [checks] : []));
  const why = sp.belowRenewThreshold
    ? el('p', { className: 'why', id: 'warning-numbers' },
        `Renews in the last minute: ${sp.renewsLastMin}, at or below the threshold of ${sp.renewsThreshold}. `,
        `Threshold = floor(expected clients × renewals per client per minute × renewal-percent-threshold) = ${formula(sp)}; `,
        `expected clients: ${sp.expectedClients}.`)
    : null;
  const todo = sp.belowRenewThreshold && sp.enabled
    ? el('ul', {},
        el('li', {}, 'If instances really are gone, deregister them from their detail view: expired leases are kept while renewals stay at or below the threshold.'),
        el('li', {}, `A small setup shows this warning by design: each instance renews ${60 / sp.expectedClientRenewalIntervalSeconds} times a minute, and the expected clients include eureka.instance.registry.expected-number-of-clients-sending-renews. Lower eureka.server.renewal-percent-threshold, or set eureka.server.enable-self-preservation=false in development.`),
        el('li', {}, 'If it is a network problem, fix the network: eviction resumes by itself once a full minute of renewals is above the threshold.'))
    : !sp.enabled
      ? el('ul', {}, el('li', {}, 'Expired leases are evicted even when many instances stop renewing at once. Set eureka.server.enable-self-preservation=true to keep them during network problems.'))
      : null;
  box.replaceChildren(el('div', { className: 'warning', id: 'self-preservation-warning' },
    el('p', { className: 'banner' }, text), why, todo), ...(checks ? [checks] : []));
}

function renderSystemStatus() {
  const summary = state.summary;
  if (!summary) return;
  const sp = summary.selfPreservation;
  rows(document.getElementById('system-status'), [
    ['Namespace', el('span', { id: 'namespace' }, NAMESPACE)],
    ['Environment', summary.environment],
    ['Data center', summary.datacenter],
    ['Current time', el('span', { id: 'current-time' }, formatTime(serverNow()))],
    ['Uptime', el('span', { id: 'uptime' }, formatUptime(serverNow() - summary.startedAt))],
    ['Lease expiration enabled', String(!sp.active)],
    ['Renews threshold', el('span', { id: 'renews-threshold' }, sp.renewsThreshold)],
    ['Renews (last min)', el('span', { id: 'renews-last-min' }, sp.renewsLastMin)],
    ['Persistence', el('span', { id: 'persistence' }, persistenceText(summary.persistence))],
    ...(summary.fleet || []).map((f) => [f.name, el('span', { className: 'fleet', 'data-key': f.key }, fleetText(f))]),
  ]);
}

// The other protocols the registry is served over (Prometheus HTTP SD, DNS, xDS): where each
// answers and its numbers, or the key that turns it on.
function fleetText(f) {
  if (!f.enabled) return `off (${f.key})`;
  const figures = Object.entries(f.figures).map(([label, value]) => `${value} ${label}`).join(', ');
  const problem = f.lastError ? ` — last problem: ${f.lastError}` : '';
  const address = f.address.replace('{base}', BASE);
  return `on: ${address}${figures ? `, ${figures}` : ''}${problem}`;
}

// heureka.persistence.*: whether the registry is kept on disk, and how its writes go.
function persistenceText(p) {
  if (!p || !p.enabled) return 'off: the registry is in memory only (heureka.persistence.dir)';
  const failing = p.lastError ? ` — writes failing: ${p.lastError}` : '';
  // A restored node whose peers have not answered yet serves what it kept alone.
  const unchecked = p.restoreCheckedWithPeers === false
    ? ' — restored view not yet checked with any peer (may hold instances cancelled meanwhile)' : '';
  return `on: ${p.path}, last write ${formatTime(p.lastWrite)}, ${p.pendingRecords} pending, ` +
    `${p.restoredInstances} restored at start${unchecked}${failing}`;
}

function renderSelfPreservation() {
  const sp = state.summary && state.summary.selfPreservation;
  if (!sp) return;
  rows(document.getElementById('self-preservation'), [
    ['Self-preservation mode', sp.enabled ? 'enabled' : 'disabled'],
    ['Expiry now', sp.active ? 'off: expired leases are kept' : 'on: expired leases are evicted'],
    ['Expected clients (E)', el('span', { id: 'expected-clients' }, sp.expectedClients)],
    ['Renewal percent threshold (P)', sp.renewalPercentThreshold],
    ['Expected renewal interval (I)', `${sp.expectedClientRenewalIntervalSeconds} s`],
    ['Threshold T = floor(E × 60/I × P)', formula(sp)],
    ['Renews (last min) R', `${sp.renewsLastMin} — expiry needs R > T`],
  ]);
}

function matches(instance, terms, status, zone) {
  if (status && instance.status !== status) return false;
  if (zone && zoneOf(instance) !== zone) return false;
  const metadata = metadataOf(instance);
  const haystack = [instance.app, idOf(instance), instance.hostName, instance.ipAddr, instance.vipAddress,
    ...Object.entries(metadata).map(([k, v]) => `${k}=${v}`)].join(' ').toLowerCase();
  return terms.every((term) => {
    const eq = term.indexOf('=');
    if (eq > 0) {
      const key = term.slice(0, eq);
      const value = term.slice(eq + 1);
      return Object.entries(metadata).some(([k, v]) => k.toLowerCase() === key && String(v).toLowerCase().includes(value));
    }
    return haystack.includes(term);
  });
}

function countedList(values) {
  const counts = new Map();
  for (const value of values) counts.set(value, (counts.get(value) || 0) + 1);
  return [...counts].map(([value, n]) => `${value || 'n/a'} (${n})`).join(', ');
}

function renderInstances() {
  const terms = document.getElementById('search').value.trim().toLowerCase().split(/\s+/).filter(Boolean);
  const status = document.getElementById('status-filter').value;
  const zoneSelect = document.getElementById('zone-filter');
  const zone = zoneSelect.value;
  const all = [...state.instances.values()];
  const zones = [...new Set(all.map(zoneOf).filter(Boolean))].sort();
  zoneSelect.replaceChildren(el('option', { value: '' }, 'All zones'),
    ...zones.map((z) => el('option', { value: z, selected: z === zone }, z)));
  const byApp = new Map();
  for (const instance of all) {
    if (!matches(instance, terms, status, zone)) continue;
    if (!byApp.has(instance.app)) byApp.set(instance.app, []);
    byApp.get(instance.app).push(instance);
  }
  const shown = [...byApp.values()].reduce((n, list) => n + list.length, 0);
  document.getElementById('counts').textContent = `${shown} of ${all.length} instances`;
  const body = document.querySelector('#instances tbody');
  if (byApp.size === 0) {
    body.replaceChildren(el('tr', {}, el('td', { colspan: 4 }, all.length ? 'No instances match' : 'No instances available')));
    return;
  }
  body.replaceChildren(...[...byApp.keys()].sort().map((app) => {
    const instances = byApp.get(app).sort((a, b) => idOf(a).localeCompare(idOf(b)));
    const byStatus = new Map();
    for (const instance of instances) {
      if (!byStatus.has(instance.status)) byStatus.set(instance.status, []);
      byStatus.get(instance.status).push(instance);
    }
    const groups = [...byStatus.keys()].sort().map((s) => el('div', { className: s === 'UP' ? 'group' : 'group bad', 'data-status': s },
      `${s} (${byStatus.get(s).length}) - `,
      byStatus.get(s).map((instance, n) => [n > 0 ? ' , ' : '', instanceLink(instance)])));
    return el('tr', { 'data-app': app },
      el('td', {}, el('b', {}, app)),
      el('td', {}, countedList(instances.map(amiOf))),
      el('td', {}, countedList(instances.map(zoneOf))),
      el('td', {}, groups));
  }));
}

function instanceLink(instance) {
  const key = keyOf(instance.app, idOf(instance));
  const page = instance.statusPageUrl && instance.statusPageUrl.startsWith('http') ? instance.statusPageUrl : null;
  return el('span', {},
    el('button', { className: 'instance-link', 'data-key': key, type: 'button', onclick: () => openDetail(key) }, idOf(instance)),
    page ? el('a', { className: 'ext', href: page, target: '_blank', rel: 'noopener', title: 'status page' }, '↗') : null);
}

function renderReplicas() {
  const box = document.getElementById('replicas');
  const peers = (state.status && state.status.peers) || [];
  if (peers.length === 0) {
    box.replaceChildren(el('p', { className: 'muted' }, 'No peers: this server runs as a single node.'));
    return;
  }
  box.replaceChildren(el('div', { className: 'scroll' }, el('table', { className: 'list', id: 'peers' },
    el('thead', {}, el('tr', {}, ['Peer', 'Replication', 'Queue', 'Lag', 'Sent', 'Failures', 'Last error'].map((h) => el('th', {}, h)))),
    el('tbody', {}, peers.map((peer) => {
      let host = peer.url;
      try { host = new URL(peer.url).host; } catch (e) { /* keep the URL */ }
      return el('tr', { 'data-peer': peer.url },
        el('td', {}, el('a', { href: peer.url.replace(/\/\/[^@/]*@/, '//') }, host)),
        el('td', { className: peer.up ? 'peer-up' : 'peer-down' }, peer.up ? 'up' : 'down'),
        el('td', {}, `${peer.queueDepth}${peer.droppedTasks ? ` (${peer.droppedTasks} dropped)` : ''}`),
        el('td', {}, peer.replicationLagMs === undefined ? '—' : `${peer.replicationLagMs} ms`),
        el('td', {}, `${peer.batchesSent} batches, ${peer.tasksSent} tasks`),
        el('td', {}, peer.failures),
        el('td', {}, peer.lastError || '—'));
    })))));
}

function renderGeneralInfo() {
  const status = state.status;
  if (!status) return;
  const stats = Object.assign({}, status.generalStats, status.applicationStats);
  rows(document.getElementById('general-info'), Object.entries(stats).map(([key, value]) => [key,
    key === 'registered-replicas' ? String(value).split(',').filter(Boolean).join(', ') : value]));
  renderInstanceInfo();
}

function renderInstanceInfo() {
  const summary = state.summary;
  if (!summary) return;
  const own = state.status && state.status.instanceInfo;
  rows(document.getElementById('instance-info'), [
    ['ipAddr', own ? own.ipAddr : summary.node.ipAddr],
    ['status', own ? own.status : summary.node.status],
    ['hostName', own ? own.hostName : summary.node.hostName],
    ['version', `Heureka ${summary.version}`],
  ]);
}

// Rows of "Recent events"; the oldest go first.
const TIMELINE_ROWS = 100;

function timelineItem(name, data) {
  const what = data.app ? `${data.app} ${data.id}` : data.region ? `${data.region}${data.error ? ` (${data.error})` : ''}` : data.peer || (data.selfPreservation
    ? `renews ${data.selfPreservation.renewsLastMin}, threshold ${data.selfPreservation.renewsThreshold}` : '');
  const extra = name === 'status-changed' ? (data.status ? ` → ${data.status} (${data.cause})` : ` (${data.cause})`) : '';
  return el('li', { 'data-event': name }, el('time', {}, formatTime(data.at || serverNow())), el('b', {}, name), ' ', what, extra);
}

// The same change seen in the history and then as an event (it happened while the page loaded).
const historyKey = (name, data) => `${name === 'evicted' ? 'cancelled' : name} ${data.app} ${data.id} ${data.at}`;

function addToTimeline(name, data) {
  if (state.history && state.history.has(historyKey(name, data))) return;
  const list = document.getElementById('timeline');
  list.prepend(timelineItem(name, data));
  while (list.children.length > TIMELINE_ROWS) list.lastChild.remove();
}

// "Recent events" opens with the history the server keeps, not empty until the next change:
// the registered and cancelled leases (lastn; an eviction is booked as a cancel, as in Eureka)
// and the status overrides of the audit trail, newest first. Shown once; events follow.
async function showHistory() {
  let lastn;
  try {
    lastn = await getJson('/dashboard/lastn');
  } catch (error) {
    return; // no history then, only the events from now on; tried again on the next load
  }
  const overrides = { 'status-override-set': 'override', 'status-override-removed': 'override-removed' };
  const history = [
    ...lastn.registered.map((lease) => ['registered', lease]),
    ...lastn.cancelled.map((lease) => ['cancelled', lease]),
    ...state.audit.filter((entry) => entry.applied && overrides[entry.action] && entry.app)
      .map((entry) => ['status-changed', { at: entry.at, app: entry.app, id: entry.id, status: entry.status, cause: overrides[entry.action] }]),
  ].sort((a, b) => b[1].at - a[1].at).slice(0, TIMELINE_ROWS);
  state.history = new Set(history.map(([name, data]) => historyKey(name, data)));
  const list = document.getElementById('timeline');
  list.append(...history.map(([name, data]) => timelineItem(name, data)));
  while (list.children.length > TIMELINE_ROWS) list.lastChild.remove();
}

// Who did what, from where, and how it ended; a summary of refusals shows its count.
function renderAudit() {
  const body = document.querySelector('#audit tbody');
  const rows = state.audit.slice(0, AUDIT_ROWS).map((entry) => {
    const on = entry.app ? `${entry.app} ${entry.id || ''}` : entry.asg ? `ASG ${entry.asg}` : (entry.user ? `user ${entry.user}` : '');
    const what = [entry.action, entry.status, entry.metadataKeys ? `keys ${entry.metadataKeys.join(', ')}` : '']
      .filter(Boolean).join(' ');
    const outcome = `${entry.outcome}${entry.count > 1 ? ` ×${entry.count}` : ''}`;
    return el('tr', {}, el('td', {}, formatTime(entry.at)), el('td', {}, entry.principal), el('td', {}, entry.address || '—'),
      el('td', {}, what), el('td', {}, on), el('td', { className: entry.applied ? '' : 'bad' }, outcome));
  });
  body.replaceChildren(...(rows.length ? rows : [el('tr', {}, el('td', { colspan: 6 }, 'No administrative actions yet'))]));
}

// --- instance detail and actions -------------------------------------------------------------

async function openDetail(key) {
  state.detailKey = key;
  document.getElementById('detail-message').textContent = '';
  renderDetail();
  const dialog = document.getElementById('detail');
  if (!dialog.open) dialog.showModal();
  // One fresh read for up-to-date lease times; later changes come from the stream.
  const [app, ...rest] = key.split('/');
  loadHealthChecks().then(() => { if (state.detailKey === key) renderDetail(); });
  try {
    const fresh = await getJson(`/apps/${encodeURIComponent(app)}/${encodeURIComponent(rest.join('/'))}`);
    if (fresh.instance && state.instances.has(key)) {
      state.instances.set(key, fresh.instance);
      renderDetail();
    }
  } catch (error) { /* the stream will tell if it is gone */ }
}

function renderDetail() {
  const key = state.detailKey;
  const instance = state.instances.get(key);
  document.getElementById('detail-title').textContent = key.replace('/', ' · ');
  for (const button of document.querySelectorAll('#detail-actions button')) button.disabled = !instance;
  if (!instance) {
    document.getElementById('detail-message').textContent = 'This instance is no longer registered.';
    return;
  }
  const lease = instance.leaseInfo || {};
  const expires = lease.lastRenewalTimestamp ? lease.lastRenewalTimestamp + lease.durationInSecs * 1000 : null;
  const port = (p) => (p ? `${p.$}${p['@enabled'] === 'true' ? '' : ' (disabled)'}` : '—');
  rows(document.getElementById('detail-fields'), [
    ['Status', el('span', { id: 'detail-status' }, instance.status)],
    ['Overridden status', instance.overriddenStatus || instance.overriddenstatus || 'UNKNOWN'],
    ['Host / IP', `${instance.hostName} / ${instance.ipAddr}`],
    ['Port / secure port', `${port(instance.port)} / ${port(instance.securePort)}`],
    ['VIP / secure VIP', `${instance.vipAddress || '—'} / ${instance.secureVipAddress || '—'}`],
    ['Zone', zoneOf(instance) || 'n/a'],
    ['Data center', instance.dataCenterInfo ? instance.dataCenterInfo.name : '—'],
    ['Home / status / health', el('span', {}, [instance.homePageUrl, instance.statusPageUrl, instance.healthCheckUrl]
      .filter(Boolean).map((url, n) => [n ? ' · ' : '', url.startsWith('http') ? el('a', { href: url, target: '_blank', rel: 'noopener' }, url) : url]))],
    ['Registered', formatTime(lease.registrationTimestamp)],
    ['Service up', formatTime(lease.serviceUpTimestamp)],
    ['Last renewal', formatTime(lease.lastRenewalTimestamp)],
    ['Lease', `${lease.durationInSecs} s, renewed every ${lease.renewalIntervalInSecs} s${expires ? `; expires ${formatTime(expires)} without renewal` : ''}`],
    ['Last updated / dirty', `${formatTime(Number(instance.lastUpdatedTimestamp))} / ${formatTime(Number(instance.lastDirtyTimestamp))}`],
    ['Action type', instance.actionType || '—'],
    ['Health check', el('span', { id: 'detail-health' }, healthCheckText(key))],
  ]);
  const metadata = Object.entries(metadataOf(instance));
  rows(document.getElementById('detail-metadata'), metadata.length ? metadata : [['(none)', '']]);
}

// What this node's probes say of an instance: verdict, last result, latency and when.
function healthCheckText(key) {
  const checks = state.healthChecks;
  if (!checks || !checks.enabled) return 'off on this server (heureka.health-checks.enabled)';
  const probe = checks.probes.find((p) => keyOf(p.app, p.id) === key);
  if (!probe) return checks.checkers > 1 ? `checked by another of ${checks.checkers} nodes, or not checked` : 'not checked (no URL or port, or heureka.health-check=off)';
  // Its address is outside heureka.health-checks.allowed-networks: no probe, no verdict.
  if (probe.refused) return `refused, no verdict · ${probe.detail} at ${formatTime(probe.at)} · ${probe.target}`;
  const verdict = probe.health === 'FAILING' ? 'FAILING (reads DOWN)' : 'passing';
  const since = probe.failingSince ? `; failing since ${formatTime(probe.failingSince)}` : '';
  return `${verdict} · last probe ${probe.passed ? 'passed' : 'failed'} (${probe.detail}, ${probe.latencyMs} ms) at ${formatTime(probe.at)}${since} · ${probe.target}`;
}

async function act(action) {
  const [app, ...rest] = state.detailKey.split('/');
  const path = `/apps/${encodeURIComponent(app)}/${encodeURIComponent(rest.join('/'))}`;
  const requests = {
    'out-of-service': ['PUT', `${path}/status?value=OUT_OF_SERVICE`],
    up: ['PUT', `${path}/status?value=UP`],
    // Without a value Eureka sets UNKNOWN: the instance's next heartbeat gets 404 and it
    // registers again with the status it reports itself.
    'remove-override': ['DELETE', `${path}/status`],
    deregister: ['DELETE', path],
  };
  if (action === 'deregister' && !confirm(`Deregister ${state.detailKey}? A running instance registers again on its next heartbeat.`)) return;
  const [method, url] = requests[action];
  const message = document.getElementById('detail-message');
  try {
    const response = await fetch(BASE + url, { method });
    message.textContent = `${method} ${BASE}${url} → ${response.status}`;
  } catch (error) {
    message.textContent = `${method} ${BASE}${url} failed: ${error.message}`;
  }
}

// --- the lastn page -----------------------------------------------------------------------------

async function showLastn() {
  document.getElementById('lastn').hidden = false;
  const lastn = await getJson('/dashboard/lastn');
  for (const [list, id] of [[lastn.cancelled, 'lastn-cancelled'], [lastn.registered, 'lastn-registered']]) {
    const body = document.querySelector(`#${id} tbody`);
    body.replaceChildren(...(list.length
      ? list.map((lease) => el('tr', {}, el('td', {}, formatTime(lease.at)), el('td', {}, `${lease.app}(${lease.id})`)))
      : [el('tr', {}, el('td', { colspan: 2 }, 'No results available'))]));
  }
  document.getElementById('live').hidden = true;
}

// --- start ------------------------------------------------------------------------------------

function start() {
  document.getElementById('namespace-switcher').addEventListener('change', (event) => {
    if (event.target.value !== NAMESPACE) location.assign(namespaceHome(event.target.value));
  });
  if (location.pathname === LASTN) return loadNamespaces().then(showLastn);
  document.getElementById('home').hidden = false;
  // The filters filter as you type; Enter must not submit the form (a handler here, not an
  // inline one: the page's Content-Security-Policy runs no inline script).
  document.getElementById('filters').addEventListener('submit', (event) => event.preventDefault());
  for (const id of ['search', 'status-filter', 'zone-filter']) {
    document.getElementById(id).addEventListener('input', renderInstances);
  }
  for (const button of document.querySelectorAll('#detail-actions button')) {
    button.addEventListener('click', () => act(button.dataset.action));
  }
  document.getElementById('detail').addEventListener('close', () => { state.detailKey = null; });
  setInterval(() => {
    if (!state.summary) return;
    const time = document.getElementById('current-time');
    const uptime = document.getElementById('uptime');
    if (time) time.textContent = formatTime(serverNow());
    if (uptime) uptime.textContent = formatUptime(serverNow() - state.summary.startedAt);
    tickRegionAges();
  }, 1000);
  // General Info's memory figures move slowly; one small status read a minute, not the registry.
  setInterval(loadStatus, 60000);
  setInterval(loadConsumers, 15000);
  setInterval(loadRegions, 15000);
  setInterval(loadNamespaces, 15000);
  openStream();
}

start();
