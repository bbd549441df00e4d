/* Live stream: one EventSource on /stream.
 *
 * The browser reconnects by itself and sends Last-Event-ID, so the service replays what we
 * missed; after every reconnect we also re-fetch the first page of each list, and every card is
 * keyed by kind+id, so a gap is filled without losing or doubling a card, even across a service
 * restart.
 */

import { LIST_PATH, api, qs } from './api.js';
import { place } from './cards.js';
import { closeDetail, selectedKey } from './detail.js';
import { $ } from './dom.js';
import { feed, removeItem, updateCount } from './feed-state.js';
import { refreshHead } from './feed.js';
import { matches } from './filters.js';
import { FROM, fromObservation } from './records.js';
import { loadSettings, settingsDirty } from './settings.js';
import { refreshStatus } from './status.js';
import { refreshStats, setQueue } from './totals.js';
import { currentView } from './views.js';

const LIVE_EVENTS = ['new_observation', 'new_summary', 'new_prompt', 'observation_deleted',
  'processing_status', 'queued', 'session_started', 'session_completed', 'settings_changed', 'lagged'];

function throttle(fn, ms) {
  let timer = null;
  return () => {
    if (timer) return;
    timer = setTimeout(() => { timer = null; fn(); }, ms);
  };
}

const live = { source: null, lastId: null, connectedOnce: false, retryMs: 1000, pendingObs: new Set(), flushTimer: null };

function setConn(state, text) {
  const node = $('#conn');
  node.className = `pill ${state === 'live' ? 'pill-live' : state === 'bad' ? 'pill-bad' : 'pill-wait'}`;
  node.textContent = text;
}

export function connect() {
  const url = live.lastId ? `/stream?${qs({ lastEventId: live.lastId })}` : '/stream';
  const source = new EventSource(url);
  live.source = source;
  source.addEventListener('connected', (ev) => {
    const hello = JSON.parse(ev.data);
    setConn('live', 'Live');
    live.retryMs = 1000;
    setQueue(hello.queueDepth);
    if (hello.compressor) $('#compressor-pill').textContent = hello.compressor;
    if (live.connectedOnce) resync();
    live.connectedOnce = true;
  });
  for (const kind of LIVE_EVENTS) {
    source.addEventListener(kind, (ev) => {
      if (ev.lastEventId) live.lastId = ev.lastEventId;
      let data = {};
      try { data = JSON.parse(ev.data); } catch (_) { /* keep {} */ }
      onLive(kind, data);
    });
  }
  source.onerror = () => {
    setConn('wait', 'Reconnecting…');
    if (source.readyState === EventSource.CLOSED) {
      // The browser gave up (e.g. an error status during a restart): retry ourselves.
      source.close();
      setTimeout(connect, live.retryMs);
      live.retryMs = Math.min(live.retryMs * 2, 15000);
    }
  };
}

function resync() {
  if (feed.mode === 'feed') refreshHead();
  refreshStats();
  if (currentView === 'status') refreshStatus();
}

const statsSoon = throttle(() => refreshStats(), 1500);
const statusSoon = throttle(() => { if (currentView === 'status') refreshStatus(); }, 1000);

function onLive(kind, data) {
  switch (kind) {
    case 'new_observation':
      live.pendingObs.add(data.id);
      clearTimeout(live.flushTimer);
      live.flushTimer = setTimeout(flushObservations, 40);
      statsSoon();
      break;
    case 'new_summary':
      liveFromList('summary', data);
      statsSoon();
      break;
    case 'new_prompt':
      liveFromList('prompt', data);
      statsSoon();
      break;
    case 'observation_deleted':
      removeItem(`observation:${data.id}`);
      if (selectedKey === `observation:${data.id}`) closeDetail();
      statsSoon();
      break;
    case 'processing_status':
      setQueue(data.queueDepth);
      statusSoon();
      break;
    case 'queued':
      statusSoon();
      break;
    case 'session_started':
    case 'session_completed':
      statsSoon();
      break;
    case 'settings_changed':
      if (currentView === 'settings' && !settingsDirty()) loadSettings();
      break;
    case 'lagged':
      refreshHead();
      break;
    default:
      break;
  }
}

function arrived(item) {
  if (feed.mode === 'search') {
    feed.newWhileSearching += 1;
    $('#new-banner-text').textContent = `${feed.newWhileSearching} new item${feed.newWhileSearching === 1 ? '' : 's'} arrived while you searched.`;
    $('#new-banner').hidden = false;
    return;
  }
  if (matches(item) && place(item, { live: true })) updateCount();
}

async function flushObservations() {
  const ids = Array.from(live.pendingObs);
  live.pendingObs.clear();
  if (!ids.length) return;
  try {
    const found = await api('/api/observations/batch', { method: 'POST', body: { ids, orderBy: 'date_asc' } });
    found.forEach((o) => arrived(fromObservation(o)));
  } catch (_) { /* deleted meanwhile, or the service is restarting: the resync catches up */ }
}

async function liveFromList(kind, data) {
  try {
    const page = await api(`${LIST_PATH[kind]}?${qs({ limit: 10, project: data.project, platform_source: feed.filters.platform })}`);
    const raw = page.items.find((r) => r.id === data.id);
    if (raw) arrived(FROM[kind](raw));
  } catch (_) { /* the resync after a reconnect catches up */ }
}
