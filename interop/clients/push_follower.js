#!/usr/bin/env node
// Follows a registry's push stream (docs/push.md) with the `eventsource` npm package, the
// WHATWG EventSource that browsers implement and Node lacks, for the interop suite: a client
// someone else wrote, whose reconnection sends `Last-Event-ID` by itself.
//
// It keeps a copy of the registry: a `snapshot` replaces it; a `delta` patches it (ADDED and
// MODIFIED set the instance, DELETED removes it). After each message it prints one JSON line:
//   {"event":"snapshot"|"delta","id":"…","version":N,"hashOk":true|false|null,
//    "instances":{"APP/ID":"STATUS",…}}
// `hashOk` compares the copy's apps__hashcode with a delta's (the whole registry's after that
// write); null for a snapshot. Also {"open":true} each time the stream (re)opens and
// {"error":"…"} when it breaks, so a test can see a reconnection.
//
// usage: node push_follower.js --url http://127.0.0.1:8761/eureka/push
'use strict';

const path = require('path');
const { createRequire } = require('module');

const requireFromJs = createRequire(path.join(__dirname, '..', 'js', 'package.json'));
const { EventSource } = requireFromJs('eventsource');

const argv = process.argv.slice(2);
const url = argv[argv.indexOf('--url') + 1];

const copy = new Map();   // "APP/ID" -> status

function instancesOf(doc) {
  const apps = [].concat(doc.applications.application || []);
  return apps.flatMap((app) => [].concat(app.instance || []));
}

// Eureka's apps__hashcode: STATUS_count_ per status present, by status name.
function hashcode() {
  const counts = new Map();
  for (const status of copy.values()) counts.set(status, (counts.get(status) || 0) + 1);
  return [...counts.keys()].sort().map((status) => `${status}_${counts.get(status)}_`).join('');
}

function print(event, id, doc, hashOk) {
  process.stdout.write(JSON.stringify({
    event, id, version: Number(doc.applications.versions__delta), hashOk,
    instances: Object.fromEntries(copy),
  }) + '\n');
}

const source = new EventSource(url);
source.addEventListener('open', () => process.stdout.write('{"open":true}\n'));
source.addEventListener('error', (error) => {
  process.stdout.write(JSON.stringify({ error: String(error && error.message) }) + '\n');
});
source.addEventListener('snapshot', (message) => {
  const doc = JSON.parse(message.data);
  copy.clear();
  for (const instance of instancesOf(doc)) copy.set(`${instance.app}/${instance.instanceId}`, instance.status);
  print('snapshot', message.lastEventId, doc, null);
});
source.addEventListener('delta', (message) => {
  const doc = JSON.parse(message.data);
  for (const instance of instancesOf(doc)) {
    const key = `${instance.app}/${instance.instanceId}`;
    if (instance.actionType === 'DELETED') copy.delete(key);
    else copy.set(key, instance.status);
  }
  print('delta', message.lastEventId, doc, hashcode() === doc.applications.apps__hashcode);
});

for (const signal of ['SIGTERM', 'SIGINT']) {
  process.on(signal, () => {
    source.close();
    process.exit(0);
  });
}
