/* Detail: the full record, its timeline and its injection history, and deleting it. */

import { api, qs } from './api.js';
import { confirmDialog, toast } from './dialogs.js';
import { $, $$, el, fill } from './dom.js';
import { feed, removeItem } from './feed-state.js';
import { absTime, fmt } from './format.js';
import { ensureFull, fromObservation, recordBody, typeClass, typeLabel } from './records.js';
import { refreshStats } from './totals.js';
import { showView } from './views.js';

export let selectedKey = null;

export function closeDetail() {
  const panel = $('#detail');
  fill(panel, el('div', { class: 'detail-placeholder' },
    el('p', { class: 'muted', text: 'Select a memory to read it in full, see what happened around it, and how often it was injected.' })));
  const previous = selectedKey && feed.items.get(selectedKey);
  $$('.card.selected').forEach((n) => n.classList.remove('selected'));
  selectedKey = null;
  if (previous) previous.node.focus();
}

export async function openDetail(item) {
  selectedKey = item.key;
  $$('.card.selected').forEach((n) => n.classList.remove('selected'));
  const entry = feed.items.get(item.key);
  if (entry) entry.node.classList.add('selected');
  const panel = $('#detail');
  fill(panel, el('p', { class: 'muted', text: 'Loading…' }));
  try { await ensureFull(item); } catch (e) {
    fill(panel, el('div', { class: 'notice notice-error', text: e.message }));
    return;
  }
  if (selectedKey !== item.key) return;
  const r = item.full || {};
  const title = el('h2', { class: 'detail-title', id: 'detail-title', tabindex: '-1', text: item.title || '(untitled)' });
  const timelineBox = el('div', {}, el('p', { class: 'muted small', text: 'Loading timeline…' }));
  const historyBox = item.kind === 'observation' ? el('div', {}, el('p', { class: 'muted small', text: 'Loading…' })) : null;
  fill(panel,
    el('div', { class: `detail-head ${typeClass(item.type)}` },
      el('span', { class: 'type-tag', text: typeLabel(item) }),
      el('button', { class: 'btn btn-ghost btn-sm', type: 'button', text: 'Close', 'aria-label': 'Close detail', onclick: closeDetail })),
    title,
    item.subtitle ? el('p', { class: 'card-sub', text: item.subtitle }) : null,
    el('div', { class: 'detail-meta' },
      el('span', { class: 'chip chip-project', text: item.project || '—' }),
      r.platform_source ? el('span', { class: 'chip chip-platform', title: 'agent platform', text: r.platform_source }) : null,
      el('span', { class: 'chip', text: `#${item.id}` }),
      el('span', { class: 'chip', title: absTime(item.epoch), text: absTime(item.epoch) }),
      r.generated_by ? el('span', { class: 'chip', text: `by ${r.generated_by}` }) : null,
      r.discovery_tokens ? el('span', { class: 'chip', text: `${fmt(r.discovery_tokens)} discovery tokens` }) : null),
    ...recordBody(item).flat(Infinity).filter(Boolean),
    historyBox ? el('section', { 'aria-labelledby': 'hist-h' }, el('h3', { id: 'hist-h', text: 'Injection history' }), historyBox) : null,
    el('section', { 'aria-labelledby': 'tl-h' }, el('h3', { id: 'tl-h', text: 'Timeline' }), timelineBox),
    item.kind === 'observation'
      ? el('section', {}, el('button', { class: 'btn btn-danger', type: 'button', id: 'delete-btn', text: 'Delete this memory…', onclick: () => deleteObservation(item) }))
      : null,
  );
  title.focus({ preventScroll: true });
  loadTimeline(item, timelineBox);
  if (historyBox) loadHistory(item, historyBox);
}

export async function openById(id) {
  showView('feed');
  const key = `observation:${id}`;
  const entry = feed.items.get(key);
  if (entry) { entry.node.scrollIntoView({ block: 'nearest' }); return openDetail(entry.item); }
  try {
    const item = fromObservation(await api(`/api/observation/${id}`));
    openDetail(item);
  } catch (e) { toast(e.message, true); }
}

function anchorOf(item) {
  if (item.kind === 'observation') return String(item.id);
  if (item.kind === 'summary') return `S${item.id}`;
  return new Date(item.epoch).toISOString();
}

async function loadTimeline(item, box) {
  try {
    const data = await api(`/api/timeline?${qs({ anchor: anchorOf(item), depth_before: 6, depth_after: 6 })}`);
    if (selectedKey !== item.key) return;
    const rows = (data.items || []).map((t) => {
      const isObs = t.kind === 'observation' && !t.is_anchor;
      const label = isObs
        ? el('button', { class: 'linklike tl-title', type: 'button', text: t.title, onclick: () => openById(t.id) })
        : el('span', { class: 'tl-title', text: t.title });
      return el('li', { class: `${typeClass(t.type)} ${t.is_anchor ? 'anchor' : ''}` },
        el('span', { class: 'tl-time', text: `${absTime(t.created_at_epoch)} · ${t.kind === 'observation' ? String(t.type).replace('_', ' ') : t.kind}` }),
        label);
    });
    fill(box, rows.length ? el('ol', { class: 'timeline' }, rows) : el('p', { class: 'muted small', text: 'Nothing else around this memory.' }));
  } catch (e) {
    fill(box, el('p', { class: 'muted small', text: `Timeline unavailable: ${e.message}` }));
  }
}

async function loadHistory(item, box) {
  try {
    const h = await api(`/api/observation/${item.id}/injections`);
    if (selectedKey !== item.key) return;
    const injected = h.injected || {};
    const fetched = h.fetched || {};
    const rows = [
      ...(injected.items || []).slice(0, 8).map((i) => el('li', {},
        el('span', { text: `injected (${i.kind.replace('_', ' ')}, ${i.shown})` }),
        el('span', { text: absTime(i.createdAt) }))),
      ...(fetched.items || []).slice(0, 8).map((f) => el('li', {},
        el('span', { text: `fetched by ${f.source}` }),
        el('span', { text: absTime(f.createdAt) }))),
    ];
    fill(box,
      el('div', { class: 'numbers' },
        el('div', { class: 'number' }, el('b', { text: fmt(injected.count || 0) }), el('span', { text: 'times injected' })),
        el('div', { class: 'number' }, el('b', { text: fmt(injected.sessions || 0) }), el('span', { text: 'sessions' })),
        el('div', { class: 'number' }, el('b', { text: fmt(fetched.count || 0) }), el('span', { text: 'times fetched' }))),
      injected.last ? el('p', { class: 'muted small', text: `Last injected ${absTime(injected.last)}.` }) : el('p', { class: 'muted small', text: 'Not injected into any session yet.' }),
      rows.length ? el('ul', { class: 'history' }, rows) : null);
  } catch (e) {
    fill(box, el('p', { class: 'muted small', text: `History unavailable: ${e.message}` }));
  }
}

async function deleteObservation(item) {
  const ok = await confirmDialog('Delete this memory?', `#${item.id} · ${item.title || '(untitled)'}`);
  if (!ok) { $('#delete-btn')?.focus(); return; }
  try {
    const result = await api(`/api/observation/${item.id}`, { method: 'DELETE' });
    removeItem(item.key);
    closeDetail();
    const held = result.corpora && result.corpora.length
      ? ` Still in corpus ${result.corpora.join(', ')} until rebuilt.` : '';
    toast(`Memory #${item.id} deleted.${held}`);
    refreshStats();
  } catch (e) {
    toast(`Not deleted: ${e.message}`, true);
  }
}
