/* Totals: the store's counts beside the feed, the queue and compressor pills, and the choices
 * the filters offer (projects, observation types and platforms the store holds).
 */

import { api } from './api.js';
import { $, $$, clear, el } from './dom.js';
import { fmt } from './format.js';
import { OBS_TYPES } from './records.js';

export function setQueue(depth) {
  if (typeof depth !== 'number') return;
  const node = $('#queue-pill');
  node.textContent = depth ? `Queue ${fmt(depth)}` : 'Queue idle';
  node.classList.toggle('pill-accent', depth > 0);
}

export async function refreshStats() {
  try {
    const stats = await api('/api/stats');
    const t = stats.totals || {};
    const box = clear($('#stats-mini'));
    for (const [label, value] of [['observations', t.observations], ['summaries', t.summaries], ['prompts', t.prompts], ['sessions', t.sessions]]) {
      box.append(el('div', {}, el('b', { text: fmt(value || 0) }), el('span', { text: label })));
    }
    if (stats.worker && stats.worker.compressor) $('#compressor-pill').textContent = stats.worker.compressor;
    const q = stats.queue || {};
    setQueue((q.pending || 0) + (q.claimed || 0));
    addTypes(Object.keys(stats.types || {}));
    addPlatforms(Object.keys(stats.platforms || {}));
  } catch (_) { /* the status pill already says we are reconnecting */ }
}

export function addTypes(types) {
  const group = $('#f-obs-types');
  const known = new Set($$('option', group).map((o) => o.value));
  for (const type of [...OBS_TYPES, ...types]) {
    if (known.has(type) || ['all', 'observations', 'summaries', 'prompts'].includes(type)) continue;
    group.append(el('option', { value: type, text: type.replace('_', ' ') }));
    known.add(type);
  }
}

/** The platform select: the platforms the store holds (``/api/stats`` ``platforms``). */
function addPlatforms(platforms) {
  const select = $('#f-platform');
  const known = new Set($$('option', select).map((o) => o.value));
  for (const name of platforms) {
    if (!known.has(name)) select.append(el('option', { value: name, text: name }));
    known.add(name);
  }
}

export async function loadProjects() {
  try {
    const data = await api('/api/projects');
    const select = $('#f-project');
    const current = select.value;
    const known = new Set($$('option', select).map((o) => o.value));
    // A name several folders share (clientA/api, clientB/api) says so: the filter is by name.
    const shared = new Map();
    for (const d of data.details || []) {
      if ((d.folders || []).length > 1) shared.set(d.name, d.folders.map((f) => f.label).join(', '));
    }
    for (const name of data.projects || []) {
      const text = shared.has(name) ? `${name} — ${shared.get(name)}` : name;
      if (!known.has(name)) select.append(el('option', { value: name, text }));
    }
    select.value = current;
  } catch (_) { /* keep what we have */ }
}
