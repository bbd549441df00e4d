/* The Status view: health of the compressor, queue, spool, index, store and service, and the
 * parked (failed) events with a retry button each.
 */

import { api } from './api.js';
import { $, clear, el, fill } from './dom.js';
import { absTime, duration, fmt } from './format.js';

function statCard(title, big, lines, extra) {
  return el('div', { class: 'panel stat-card' },
    el('h3', { text: title }),
    el('div', { class: 'stat-big', text: big }),
    el('ul', { class: 'stat-lines' }, lines.filter(Boolean).map(([k, v]) => el('li', {}, el('span', { text: k }), el('b', { text: v ?? '—' })))),
    extra || null);
}

export async function refreshStatus() {
  try {
    const [health, stats, failed] = await Promise.all([api('/api/health'), api('/api/stats'), api('/api/queue/failed')]);
    const q = health.queue || {};
    const emb = health.embeddings || {};
    const spool = health.spool || {};
    const t = stats.totals || {};
    const worker = stats.worker || {};
    const uptime = health.uptimeSeconds || 0;
    fill($('#status-cards'),
      statCard('Compressor', health.compressor, [
        ['processed since start', fmt(worker.processed || 0)],
        ['last error', worker.lastError || 'none'],
      ]),
      statCard('Queue', `${fmt(health.queueDepth)} waiting`, [
        ['pending', fmt(q.pending)], ['in progress', fmt(q.claimed)], ['done', fmt(q.done)], ['failed', fmt(q.failed)],
      ]),
      statCard('Spool', `${fmt(spool.pending || 0)} pending`, [
        ['replayed', fmt(spool.processed || 0)], ['rejected', fmt(spool.rejected || 0)],
      ]),
      statCard('Embedding index', emb.state || 'unknown', [
        emb.embedder ? ['embedder', emb.embedder] : null,
        emb.indexed !== undefined ? ['indexed', fmt(emb.indexed)] : null,
        emb.pending !== undefined && emb.pending !== null ? ['waiting', fmt(emb.pending)] : null,
        emb.reindexing ? ['reindex', 'running'] : null,
      ], emb.reason ? el('p', { class: 'muted small', text: emb.reason }) : null),
      statCard('Store', `${fmt(t.observations || 0)} observations`, [
        ['sessions', fmt(t.sessions || 0)], ['summaries', fmt(t.summaries || 0)], ['prompts', fmt(t.prompts || 0)],
        ['events', fmt(t.events || 0)], ['size', `${((stats.dbSizeBytes || 0) / 1048576).toFixed(1)} MB`],
      ]),
      statCard('Service', `v${health.version}`, [
        ['schema', fmt(health.schemaVersion)], ['uptime', duration(uptime)],
        ['pid', String(health.pid)], ['data dir', health.dataDir],
      ], (health.warnings || []).length ? el('p', { class: 'field-error', text: health.warnings.join(' ') }) : null),
    );
    renderFailed(failed.items || []);
  } catch (e) {
    fill($('#status-cards'), el('div', { class: 'notice notice-error', text: e.message }));
  }
}

function renderFailed(items) {
  const box = clear($('#failed-list'));
  $('#retry-all').disabled = items.length === 0;
  if (!items.length) {
    box.append(el('p', { class: 'muted', text: 'No parked events. Everything the hooks sent has been compressed.' }));
    return;
  }
  box.append(el('table', {},
    el('thead', {}, el('tr', {}, ['Event', 'Kind', 'Project', 'Attempts', 'Reason', 'Failed', ''].map((h) => el('th', { scope: 'col', text: h })))),
    el('tbody', {}, items.map((f) => el('tr', {},
      el('td', { text: `#${f.eventId}` }), el('td', { text: f.kind }), el('td', { text: f.project || '—' }),
      el('td', { text: String(f.attempts) }), el('td', { class: 'reason', text: f.reason || '' }),
      el('td', { text: absTime(f.failedAt) }),
      el('td', {}, el('button', { class: 'btn btn-sm', type: 'button', text: 'Retry', 'aria-label': `Retry event ${f.eventId}`, onclick: () => retry([f.eventId]) })))))));
}

export async function retry(eventIds) {
  try {
    const result = await api('/api/queue/retry', { method: 'POST', body: eventIds ? { eventIds } : {} });
    const msg = $('#retry-msg');
    msg.textContent = `Re-queued ${result.requeued} event${result.requeued === 1 ? '' : 's'}.`;
    msg.className = 'form-msg ok';
    refreshStatus();
  } catch (e) {
    const msg = $('#retry-msg');
    msg.textContent = e.message;
    msg.className = 'form-msg bad';
  }
}
