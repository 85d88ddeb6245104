// The live page: draws the scheduler from /api/v1/telemetry/stream (SSE), lists jobs from
// /api/v1/jobs and starts template jobs from /api/v1/workloads. No libraries: it must work offline.
//
// When the service requires a token (gosched.api.token, or JWTs from an identity provider), every
// /api/v1 call needs "Authorization: Bearer ...". EventSource cannot send headers, so the stream is
// read with fetch() and parsed here; after a 401 the page shows a token field and keeps the token for
// the tab (sessionStorage); after a 403 (a token without the scope a call needs) it offers the field
// again.
'use strict';

const RUNQ_SLOTS = 256;          // size of a P's local ring (Go: runtime/runtime2.go runq [256]guintptr)
const HISTORY = 120;             // points kept in the rate chart
const STREAM_INTERVAL_MS = 500;

const $ = (id) => document.getElementById(id);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const TOKEN_KEY = 'gosched.token';

function api(path, options = {}) {
  const token = sessionStorage.getItem(TOKEN_KEY);
  const headers = Object.assign({}, options.headers || {});
  if (token) headers.Authorization = 'Bearer ' + token;
  return fetch(path, Object.assign({}, options, { headers })).then((r) => {
    if (r.status === 401) askForToken('token needed');
    else if (r.status === 403) $('token').hidden = false;
    return r;
  });
}

function askForToken(why) {
  $('token').hidden = false;
  setConn(why, false);
}
const fmt = (n) => (n === undefined || n === null) ? '–' : Number(n).toLocaleString('en-US');
const history = [];              // {t, steals, preempt, handoff} per second
let previous = null;             // last snapshot, to turn totals into rates

function fmtSeconds(s) {
  if (!s) return '0';
  if (s < 1e-3) return (s * 1e6).toFixed(0) + 'µs';
  if (s < 1) return (s * 1e3).toFixed(1) + 'ms';
  return s.toFixed(2) + 's';
}

// ---- Ps --------------------------------------------------------------------------------------

function lane(p) {
  let el = document.querySelector(`.lane[data-p="${p.id}"]`);
  if (!el) {
    el = document.createElement('div');
    el.className = 'lane';
    el.dataset.p = p.id;
    el.innerHTML = `<span class="pid">P${p.id}</span><span class="status"></span>
      <div class="bar" title="local run queue"><div class="fill"></div></div><span class="runq num"></span>
      <span class="runnext" title="runnext"></span><span class="current" title="current goroutine"></span><span class="m"></span>`;
    $('lanes').appendChild(el);
  }
  return el;
}

function drawProcs(procs) {
  const live = new Set(procs.map((p) => String(p.id)));
  for (const el of document.querySelectorAll('.lane')) {
    if (!live.has(el.dataset.p)) el.remove();   // procresize shrank GOMAXPROCS
  }
  for (const p of procs) {
    const el = lane(p);
    const st = el.querySelector('.status');
    st.textContent = p.status;
    st.className = 'status ' + p.status;
    el.querySelector('.fill').style.width = Math.min(100, 100 * p.runqueue / RUNQ_SLOTS) + '%';
    el.querySelector('.runq').textContent = p.runqueue;
    el.querySelector('.runnext').textContent = p.runnext >= 0 ? 'next G' + p.runnext : 'next –';
    el.querySelector('.current').textContent = p.current >= 0 ? 'run G' + p.current : 'run –';
    el.querySelector('.m').textContent = p.m >= 0 ? 'M' + p.m : '–';
  }
}

// ---- rates chart -----------------------------------------------------------------------------

function pushRates(s) {
  if (previous && s.timeMillis > previous.timeMillis) {
    const dt = (s.timeMillis - previous.timeMillis) / 1000;
    const c = s.counters, q = previous.counters;
    const point = {
      steals: Math.max(0, c.steals - q.steals) / dt,
      preempt: Math.max(0, (c.preemptions + c.preemptHandoffs) - (q.preemptions + q.preemptHandoffs)) / dt,
      handoff: Math.max(0, c.handoffs - q.handoffs) / dt,
    };
    history.push(point);
    if (history.length > HISTORY) history.shift();
    $('steals-rate').textContent = point.steals.toFixed(1);
    $('preempt-rate').textContent = point.preempt.toFixed(1);
    $('handoff-rate').textContent = point.handoff.toFixed(1);
  }
  previous = s;
  drawChart();
}

function drawChart() {
  const canvas = $('chart');
  const ratio = window.devicePixelRatio || 1;
  const w = canvas.clientWidth || canvas.width, h = canvas.clientHeight || canvas.height;
  if (canvas.width !== Math.round(w * ratio)) { canvas.width = Math.round(w * ratio); canvas.height = Math.round(h * ratio); }
  const g = canvas.getContext('2d');
  g.setTransform(ratio, 0, 0, ratio, 0, 0);
  g.clearRect(0, 0, w, h);
  const css = getComputedStyle(document.documentElement);
  const max = Math.max(1, ...history.flatMap((p) => [p.steals, p.preempt, p.handoff]));
  g.strokeStyle = '#273039'; g.fillStyle = '#7f8b98'; g.font = '11px system-ui'; g.lineWidth = 1;
  for (let i = 0; i <= 4; i++) {
    const y = 8 + (h - 16) * i / 4;
    g.beginPath(); g.moveTo(36, y); g.lineTo(w, y); g.stroke();
    g.fillText((max * (4 - i) / 4).toFixed(max < 8 ? 1 : 0), 2, y + 4);
  }
  const series = [['steals', '--steal'], ['preempt', '--pre'], ['handoff', '--hand']];
  for (const [key, color] of series) {
    g.strokeStyle = css.getPropertyValue(color).trim() || '#fff';
    g.lineWidth = 2;
    g.beginPath();
    history.forEach((p, i) => {
      const x = 36 + (w - 40) * i / (HISTORY - 1);
      const y = 8 + (h - 16) * (1 - p[key] / max);
      if (i === 0) g.moveTo(x, y); else g.lineTo(x, y);
    });
    g.stroke();
  }
}

// ---- one snapshot ----------------------------------------------------------------------------

function render(s) {
  $('gomaxprocs').textContent = s.gomaxprocs;
  $('goroutines').textContent = fmt(s.goroutines.total);
  $('runnable').textContent = fmt(s.goroutines.runnable);
  $('waiting').textContent = fmt(s.goroutines.waiting);
  $('spawned').textContent = fmt(s.counters.spawned);
  $('schedules').textContent = fmt(s.counters.schedules);
  $('latency').textContent = fmtSeconds(s.latency.p50Seconds) + ' / ' + fmtSeconds(s.latency.p99Seconds);
  $('global-runq').textContent = fmt(s.globalRunqueue);
  // The global queue is unbounded; scale the bar to 4 rings so a backlog stays visible.
  $('global-fill').style.width = Math.min(100, 100 * s.globalRunqueue / (4 * RUNQ_SLOTS)) + '%';
  for (const k of ['running', 'spinning', 'idle', 'syscall', 'total']) $('ms-' + k).textContent = s.threads[k];
  $('schedtrace').textContent = s.schedtrace + '\n' + s.procs.map((p) =>
    `  P${p.id}: status=${p.status} schedtick=${p.schedtick} syscalltick=${p.syscalltick} m=${p.m} runqsize=${p.runqueue} timers=${p.timers}`).join('\n');
  drawProcs(s.procs);
  pushRates(s);
}

function setConn(text, on) {
  $('conn').textContent = text;
  $('conn').className = on ? 'conn on' : 'conn off';
}

/** One SSE block ("event:…", "data:…" lines); comments (":keepalive") are ignored. */
function handleBlock(block) {
  let event = 'message';
  const data = [];
  for (const line of block.split(/\r?\n/)) {
    if (line.startsWith('event:')) event = line.slice(6).trim();
    else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
  }
  if (event === 'snapshot' && data.length) {
    setConn('live', true);
    render(JSON.parse(data.join('\n')));
  }
}

/** Reads the stream for as long as the page lives, reconnecting after 2 s on any end or error. */
async function connect() {
  for (;;) {
    try {
      const r = await api('/api/v1/telemetry/stream?intervalMs=' + STREAM_INTERVAL_MS,
        { headers: { Accept: 'text/event-stream' } });
      if (r.ok) {
        const reader = r.body.pipeThrough(new TextDecoderStream()).getReader();
        let buffer = '';
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buffer += value;
          let end;
          while ((end = buffer.search(/\r?\n\r?\n/)) >= 0) {
            handleBlock(buffer.slice(0, end));
            buffer = buffer.slice(end).replace(/^\r?\n\r?\n/, '');
          }
        }
      } else if (r.status === 403) {
        askForToken('token lacks a scope');
      }
    } catch (e) { /* network error: retry below */ }
    if (!$('conn').textContent.startsWith('token ')) setConn('reconnecting…', false);
    await sleep(2000);
  }
}

// ---- jobs ------------------------------------------------------------------------------------

let templates = [];

function showParams() {
  const t = templates.find((x) => x.name === $('template').value);
  $('template-desc').textContent = t ? t.description : '';
  const box = $('params');
  box.innerHTML = '';
  for (const p of (t ? t.params : [])) {
    const label = document.createElement('label');
    label.title = p.description;
    label.innerHTML = `<span>${p.name}</span><input type="number" name="${p.name}" min="${p.min}" max="${p.max}" value="${p.defaultValue}">`;
    box.appendChild(label);
  }
}

async function loadTemplates() {
  try {
    const r = await api('/api/v1/workloads');
    templates = (await r.json()).templates || [];
  } catch (e) {
    templates = [];
  }
  $('template').innerHTML = templates.map((t) => `<option value="${t.name}">${t.name}</option>`).join('');
  showParams();
}

async function submitJob(ev) {
  ev.preventDefault();
  const params = {};
  for (const input of $('params').querySelectorAll('input')) params[input.name] = Number(input.value);
  $('job-status').textContent = 'submitting…';
  try {
    const r = await api('/api/v1/jobs', {
      method: 'POST', headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ template: $('template').value, params }),
    });
    const body = await r.json();
    $('job-status').textContent = r.ok ? `job ${body.id} ${body.state}` : `${r.status}: ${body.detail || body.title}`;
    loadJobs();
  } catch (e) {
    $('job-status').textContent = 'failed: ' + e;
  }
}

/** The jobs list: the filters' values as listJobs's query parameters. */
function jobsQuery() {
  const q = new URLSearchParams({ size: '10' });
  if ($('job-state-filter').value) q.set('state', $('job-state-filter').value);
  const t = $('job-template-filter').value.trim();
  if (t) q.set('template', t);
  return q.toString();
}

const RETRYABLE = new Set(['failed', 'cancelled', 'timed_out']);

function jobActions(j) {
  const id = esc(j.id);
  if (j.state === 'queued' || j.state === 'running' || j.state === 'waiting') return `<button class="small cancel" data-cancel="${id}">cancel</button>`;
  if (RETRYABLE.has(j.state)) return `<button class="small retry" data-retry="${id}">retry</button>`;
  return '';
}

async function loadJobs() {
  try {
    const r = await api('/api/v1/jobs?' + jobsQuery());
    if (!r.ok) {
      const problem = await r.json().catch(() => ({}));
      $('jobs-status').textContent = `${r.status}: ${problem.detail || problem.title || ''}`;
      return;
    }
    const page = await r.json();
    $('jobs-status').textContent = '';
    $('jobs-total').textContent = `${fmt(page.total)} in all`;
    setHtml($('jobs').querySelector('tbody'), (page.items || []).map((j) => `<tr data-job="${esc(j.id)}">
      <td><a href="#job/${esc(j.id)}" data-job-link="${esc(j.id)}">${esc(j.id)}</a></td><td>${esc(j.template || j.name || '')}</td>
      <td class="state ${esc(j.state)}">${esc(j.state)}</td><td>${j.attempt} / ${j.maxAttempts}</td>
      <td>${j.counters ? fmt(j.counters.goroutinesSpawned) : ''}</td><td>${j.durationMs ?? ''}</td><td>${jobActions(j)}</td></tr>`).join(''));
  } catch (e) { /* the next poll retries */ }
}

/** Cancel (DELETE) or retry (POST .../retry) a job, through api() so the token goes with it. */
async function jobAction(id, action) {
  const r = action === 'cancel' ? await api('/api/v1/jobs/' + encodeURIComponent(id), { method: 'DELETE' })
    : await api('/api/v1/jobs/' + encodeURIComponent(id) + '/retry', { method: 'POST' });
  const body = await r.json().catch(() => ({}));
  $('jobs-status').textContent = r.ok ? `job ${id}: ${body.state}` : `${r.status}: ${body.detail || body.title || ''}`;
  loadJobs();
  if (detailJob === id) showJob(id);
}

// ---- schedules: next and last fire, the last job and its state, paused ---------------------------

/** A schedule's rule as people read it: its cron expression (and zone) or its period. */
function scheduleWhen(s) {
  return s.cron ? `${s.cron}${s.timeZone && s.timeZone !== 'UTC' ? ' (' + s.timeZone + ')' : ''}` : `every ${s.every}`;
}

async function loadSchedules() {
  try {
    const r = await api('/api/v1/schedules');
    if (!r.ok) {
      const problem = await r.json().catch(() => ({}));
      $('schedule-list-status').textContent = `${r.status}: ${problem.detail || problem.title || ''}`;
      return;
    }
    const items = (await r.json()).items || [];
    $('schedule-list-status').textContent = '';
    $('schedule-list-total').textContent = `${fmt(items.length)} in all`;
    setHtml($('schedule-table').querySelector('tbody'), items.map((s) => `<tr data-schedule="${esc(s.name)}">
      <td>${esc(s.name)}</td><td>${esc(scheduleWhen(s))}</td><td class="next-fire">${esc(s.nextFireAt || '–')}</td>
      <td class="last-fire">${esc(s.lastFireAt || '–')}</td>
      <td>${s.lastJobId ? `<a href="#job/${esc(s.lastJobId)}" data-job-link="${esc(s.lastJobId)}">${esc(s.lastJobId.slice(0, 8))}</a>
        <span class="state ${esc(s.lastJobState || '')}">${esc(s.lastJobState || 'gone')}</span>` : '–'}</td>
      <td class="paused">${s.paused ? 'paused' : ''}</td></tr>`).join(''));
  } catch (e) { /* the next poll retries */ }
}

// ---- the detail panel: a job (state, attempts, result, goroutines) or a text dump --------------

let detailJob = null;

/** Replaces el's content only when it changed: a poll that finds nothing new leaves the rows (and a pressed button) alone. */
function setHtml(el, html) {
  if (el.dataset.html !== html) {
    el.innerHTML = html;
    el.dataset.html = html;
  }
}

function openDetail(title, html) {
  $('detail-title').textContent = title;
  setHtml($('detail-body'), html);
  $('detail').hidden = false;
}

function closeDetail() {
  detailJob = null;
  $('detail').hidden = true;
  if (location.hash) window.history.replaceState(null, '', location.pathname);
}

/** The jobs a job waits for (its "after"), each a link to its own detail, with its state now; empty without. */
function afterChain(j) {
  if (!j.after || j.after.length === 0) return '';
  return `<h3>after: waits for ${j.after.length} job${j.after.length === 1 ? '' : 's'} to succeed</h3>`
    + `<table class="jobs" id="job-after"><thead><tr><th>job</th><th>state</th></tr></thead><tbody>${j.after.map((a) =>
      `<tr data-after="${esc(a.id)}"><td><a href="#job/${esc(a.id)}" data-job-link="${esc(a.id)}">${esc(a.id)}</a></td>`
      + `<td class="state ${esc(a.state)}">${esc(a.state)}</td></tr>`).join('')}</tbody></table>`;
}

function goroutineRows(list) {
  return list.map((g) => `<tr data-goid="${g.id}"><td>${g.id}</td><td class="state ${esc(g.state)}">${esc(g.state)}</td>
    <td>${esc(g.waitReason)}</td><td>${fmtWait(g.waitingForMs)}</td></tr>`).join('');
}

async function showJob(id) {
  detailJob = id;
  const r = await api('/api/v1/jobs/' + encodeURIComponent(id));
  const j = await r.json().catch(() => ({}));
  if (!r.ok) {
    openDetail('job ' + id, `<p class="hint">${r.status}: ${esc(j.detail || j.title || '')}</p>`);
    return;
  }
  const row = (k, v) => v === undefined || v === null ? '' : `<tr><td>${k}</td><td>${esc(v)}</td></tr>`;
  let html = `<table class="kv" id="job-fields">${row('state', j.state)}${row('template', j.template)}${row('name', j.name)}
    ${row('attempt', j.attempt + ' / ' + j.maxAttempts)}${row('submitted', j.submittedAt)}${row('started', j.startedAt)}
    ${row('finished', j.finishedAt)}${row('duration (ms)', j.durationMs)}
    ${row('goroutines spawned', j.counters && j.counters.goroutinesSpawned)}${row('messages sent / received',
      j.counters && (j.counters.messagesSent + ' / ' + j.counters.messagesReceived))}
    ${row('error', j.error && `${j.error.reason} at ${j.error.pointer || '(the job)'}: ${j.error.detail}`)}</table>
    <p>${jobActions(j)}</p>${afterChain(j)}`;
  if (j.result) html += `<h3>result: the last value received</h3><pre id="job-result">${esc(JSON.stringify(j.result.lastReceived))}</pre>`;
  html += '<h3>attempts</h3>' + ((j.attempts || []).length === 0 ? '<p class="hint">none ended yet</p>'
    : `<table class="jobs" id="job-attempts"><thead><tr><th>#</th><th>outcome</th><th>started</th><th>ended</th><th>ms</th><th>error</th></tr></thead>
      <tbody>${j.attempts.map((a) => `<tr><td>${a.number}</td><td class="state ${esc(a.outcome)}">${esc(a.outcome)}</td>
        <td>${esc(a.startedAt || '')}</td><td>${esc(a.finishedAt || '')}</td><td>${a.durationMs ?? ''}</td>
        <td>${a.error ? esc(a.error.reason + ': ' + a.error.detail) : ''}</td></tr>`).join('')}</tbody></table>`);
  const g = await api('/api/v1/jobs/' + encodeURIComponent(id) + '/goroutines?limit=100');
  if (g.ok) {
    const d = await g.json();
    html += `<h3>goroutines: ${fmt(d.total)} live, ${fmt((d.leaked || []).length)} leaked</h3>`
      + `<table class="jobs" id="job-goroutines"><thead><tr><th>id</th><th>state</th><th>wait reason</th><th>waiting for</th></tr></thead>
        <tbody>${goroutineRows(d.goroutines || [])}</tbody></table>`;
  } else {
    html += `<p class="hint">goroutines: ${g.status === 403 ? 'the token lacks scheduler:admin' : g.status}</p>`;
  }
  if (detailJob === id) openDetail('job ' + id, html);
}

/** The full dump (text), fetched with the token and shown here: a plain link cannot send one. */
async function showDump(ev) {
  ev.preventDefault();
  detailJob = null;
  const r = await api($('goroutine-dump').getAttribute('href'));
  const text = await r.text();
  openDetail('goroutine dump', r.ok ? `<pre id="dump-text">${esc(text)}</pre>` : `<p class="hint">${r.status}: ${esc(text)}</p>`);
}

// ---- goroutines (GET /api/v1/debug/goroutines: needs scheduler:admin) ---------------------------

function esc(v) {
  return String(v).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c]));
}

function fmtWait(ms) {
  if (!ms) return '';
  if (ms < 1000) return ms + ' ms';
  if (ms < 120000) return (ms / 1000).toFixed(1) + ' s';
  return Math.floor(ms / 60000) + ' min';
}

async function loadGoroutines() {
  try {
    const token = sessionStorage.getItem(TOKEN_KEY);
    const r = await fetch('/api/v1/debug/goroutines?limit=50', { headers: token ? { Authorization: 'Bearer ' + token } : {} });
    if (r.status === 401 || r.status === 403) {
      $('goroutines-status').textContent = r.status === 403 ? 'the goroutine table needs a token with scheduler:admin' : '';
      return;
    }
    if (!r.ok) return;
    const d = await r.json();
    $('goroutines-status').textContent = '';
    $('goroutines-total').textContent = fmt(d.total);
    $('goroutines-leaked').textContent = fmt(d.leakedTotal);
    $('goroutines-at').textContent = 'as of ' + new Date().toLocaleTimeString('en-GB');
    setHtml($('goroutine-table').querySelector('tbody'), d.goroutines.map((g) => {
      const labels = Object.entries(g.labels || {}).map(([k, v]) => `${esc(k)}=${esc(v)}`).join(' ');
      const job = g.labels && g.labels.job
        ? ` <a href="#job/${esc(g.labels.job)}" data-job-link="${esc(g.labels.job)}">job</a>` : '';
      const by = g.createdBy ? `${esc(g.createdBy.function)} (${esc(g.createdBy.file)}:${g.createdBy.line})` : '';
      return `<tr data-goid="${g.id}"><td>${g.id}</td><td class="state ${esc(g.state)}">${esc(g.state)}</td>
        <td>${esc(g.waitReason)}</td><td>${fmtWait(g.waitingForMs)}</td><td>${labels}${job}</td><td>${by}</td></tr>`;
    }).join(''));
  } catch (e) { /* the next poll retries */ }
}

// ---- trace download ---------------------------------------------------------------------------
// The link works without script; with it, the trace is fetched through api() so a bearer token is
// sent, and a 409 (a recording already running) or other problem is shown instead of saved.

async function downloadTrace(ev) {
  ev.preventDefault();
  const link = $('trace-link');
  if (link.classList.contains('busy')) return;
  link.classList.add('busy');
  $('trace-status').textContent = 'recording 5 s…';
  try {
    const r = await api(link.getAttribute('href'));
    if (!r.ok) {
      const problem = await r.json().catch(() => ({}));
      $('trace-status').textContent = `${r.status}: ${problem.detail || problem.title || 'trace failed'}`;
      return;
    }
    const url = URL.createObjectURL(await r.blob());
    const a = document.createElement('a');
    a.href = url;
    a.download = 'gosched-trace.json';
    document.body.appendChild(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10000);
    $('trace-status').textContent = 'saved gosched-trace.json (open in ui.perfetto.dev)';
  } catch (e) {
    $('trace-status').textContent = 'trace failed: ' + e;
  } finally {
    link.classList.remove('busy');
  }
}

$('trace-link').addEventListener('click', downloadTrace);
$('token').addEventListener('change', () => {
  sessionStorage.setItem(TOKEN_KEY, $('token').value.trim());
  setConn('connecting…', false);
  loadTemplates();
  loadJobs();
  loadSchedules();
  loadGoroutines();
  if (location.hash.startsWith('#job/')) showJob(decodeURIComponent(location.hash.slice(5)));
});
$('template').addEventListener('change', showParams);
$('job-state-filter').addEventListener('change', loadJobs);
$('job-template-filter').addEventListener('change', loadJobs);
$('goroutine-dump').addEventListener('click', showDump);
$('detail-close').addEventListener('click', closeDetail);
// One listener for every job link and button, wherever the row was drawn (list, goroutines, detail).
document.addEventListener('click', (ev) => {
  const t = ev.target.closest('[data-job-link], [data-cancel], [data-retry]');
  if (!t) return;
  ev.preventDefault();
  if (t.dataset.jobLink) showJob(t.dataset.jobLink);
  else if (t.dataset.cancel) jobAction(t.dataset.cancel, 'cancel');
  else jobAction(t.dataset.retry, 'retry');
});
setInterval(() => { if (detailJob && !$('detail').hidden) showJob(detailJob); }, 2000);
$('job-form').addEventListener('submit', submitJob);
window.addEventListener('resize', drawChart);
loadTemplates();
loadJobs();
setInterval(loadJobs, 2000);
loadSchedules();
setInterval(loadSchedules, 2000);
loadGoroutines();
// Every second: the table's count and the header's (the stream's, every 500 ms) describe the same moment within a second.
setInterval(loadGoroutines, 1000);
if (location.hash.startsWith('#job/')) showJob(decodeURIComponent(location.hash.slice(5)));
connect();
