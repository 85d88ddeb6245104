// k6 load: submits template jobs to the gosched service and reads the job list.
// Runs inside docker compose (`docker compose --profile load up`); the target is the app service.
// GOSCHED_URLS (comma-separated): several nodes of a cluster (docker-compose.cluster.yml); each
// call goes to the next node in turn, and a second scenario relays values through a named channel
// living on the first node: sent on one node, received on another.
// GOSCHED_TOKEN: the bearer token when the service requires one (the static gosched.api.token, or a
// JWT with jobs:read and jobs:write).
import http from 'k6/http';
import { check, sleep } from 'k6';

const BASE = __ENV.GOSCHED_URL || 'http://app:8080';
const BASES = (__ENV.GOSCHED_URLS || BASE).split(',').map((u) => u.trim()).filter((u) => u.length > 0);
const RELAY = 'k6-relay';
let turn = 0;
/** The node for the next call: round robin over GOSCHED_URLS, started at a different node per VU. */
function node() {
  turn += 1;
  return BASES[(__VU + turn) % BASES.length];
}
const TOKEN = __ENV.GOSCHED_TOKEN || '';
const AUTH = TOKEN ? { Authorization: `Bearer ${TOKEN}` } : {};

export const options = {
  scenarios: {
    submit: {
      executor: 'ramping-arrival-rate',
      startRate: 2,
      timeUnit: '1s',
      preAllocatedVUs: 20,
      maxVUs: 50,
      stages: [
        { target: 20, duration: '1m' },
        { target: 20, duration: '2m' },
        { target: 0, duration: '30s' },
      ],
    },
    relay: {
      // only with more than one node: a value sent on one node and received on another
      executor: 'constant-vus',
      exec: 'relay',
      vus: BASES.length > 1 ? 4 : 1,
      duration: '3m30s',
    },
  },
  thresholds: {
    http_req_failed: ['rate<0.05'],
    'http_req_duration{name:submit}': ['p(99)<500'],
  },
};

const JOBS = [
  { template: 'fan-out-fan-in', params: { workers: 16, itemsPerWorker: 200, computeUs: 50 } },
  { template: 'pipeline', params: { stages: 6, items: 500, computeUs: 20 } },
  { template: 'ping-pong', params: { rounds: 2000 } },
  { template: 'timer-storm', params: { goroutines: 500, sleeps: 5, sleepMs: 2 } },
  { template: 'hog-vs-ticker', params: { hogs: 2, hogUs: 20000, bursts: 5, ticks: 50, tickMs: 2 } },
];

const JSON_AUTH = Object.assign({ 'Content-Type': 'application/json' }, AUTH);

export function setup() {
  // 201, or 409 when it exists already (a rerun): both fine
  http.post(`${BASES[0]}/api/v1/channels`, JSON.stringify({ name: RELAY, capacity: 16 }), { headers: JSON_AUTH, tags: { name: 'channel' } });
}

export function relay() {
  const from = node();
  const to = node();
  const sent = http.post(`${from}/api/v1/channels/${RELAY}/send`, JSON.stringify({ value: { vu: __VU, iter: __ITER }, timeoutMs: 2000 }),
    { headers: JSON_AUTH, tags: { name: 'send' } });
  check(sent, { 'sent or shed': (r) => r.status === 200 || r.status === 429 || r.status === 503 });
  const got = http.post(`${to}/api/v1/channels/${RELAY}/recv`, JSON.stringify({ timeoutMs: 2000 }),
    { headers: JSON_AUTH, tags: { name: 'recv' } });
  check(got, { 'received or shed': (r) => r.status === 200 || r.status === 429 || r.status === 503 });
}

export default function () {
  const job = JOBS[Math.floor(Math.random() * JOBS.length)];
  const BASE = node();
  const res = http.post(`${BASE}/api/v1/jobs`, JSON.stringify(job), {
    headers: Object.assign({ 'Content-Type': 'application/json' }, AUTH),
    tags: { name: 'submit' },
  });
  // 429/503 are admission control doing its job under load, not failures of the service.
  check(res, { 'accepted or shed': (r) => r.status === 202 || r.status === 429 || r.status === 503 });
  if (Math.random() < 0.1) {
    http.get(`${BASE}/api/v1/jobs?size=20`, { headers: AUTH, tags: { name: 'list' } });
  }
  sleep(0.1);
}
