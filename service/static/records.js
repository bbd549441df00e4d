/* Records: what the API returns (observations, summaries, prompts, search hits) turned into
 * feed items, and one item's content rendered for a card or the detail panel.
 *
 * Class names derived from data are whitelisted (`typeClass`): a stored type is never pasted
 * into a class attribute as is.
 */

import { api } from './api.js';
import { el } from './dom.js';
import { firstLine } from './format.js';

export const OBS_TYPES = ['decision', 'bugfix', 'feature', 'refactor', 'discovery', 'change',
  'security_alert', 'security_note'];

export function typeClass(type) {
  return 't-' + (OBS_TYPES.includes(type) || type === 'summary' || type === 'prompt' ? type : 'other');
}

export function fromObservation(o) {
  return { key: `observation:${o.id}`, kind: 'observation', id: o.id, epoch: o.created_at_epoch,
    project: o.project, platform: o.platform_source, type: o.type, title: o.title, subtitle: o.subtitle, full: o };
}
function fromSummary(s) {
  return { key: `summary:${s.id}`, kind: 'summary', id: s.id, epoch: s.created_at_epoch,
    project: s.project, type: 'summary',
    title: firstLine(s.request) || firstLine(s.completed) || 'Session summary',
    subtitle: firstLine(s.completed || s.learned), full: s };
}
function fromPrompt(p) {
  return { key: `prompt:${p.id}`, kind: 'prompt', id: p.id, epoch: p.created_at_epoch,
    project: p.project, type: 'prompt', title: firstLine(p.prompt_text) || '(prompt)',
    subtitle: `prompt ${p.prompt_number}`, full: p };
}
export function fromHit(h) {
  return { key: `${h.kind}:${h.id}`, kind: h.kind, id: h.id, epoch: h.created_at_epoch,
    project: h.project, platform: h.platform_source, type: h.type, title: h.title, subtitle: h.subtitle, full: null };
}
export const FROM = { observation: fromObservation, summary: fromSummary, prompt: fromPrompt };

export function typeLabel(item) {
  return item.kind === 'observation' ? String(item.type || 'observation').replace('_', ' ') : item.kind;
}

function listSection(label, values, render) {
  if (!values || values.length === 0) return null;
  return [el('div', { class: 'section-label', text: label }), render(values)];
}

function chips(values) {
  return el('div', { class: 'chips' }, values.map((v) => el('span', { class: 'chip', text: v })));
}

function files(read, modified) {
  const rows = [
    ...(modified || []).map((f) => el('li', { title: 'modified' }, el('span', { class: 'tag', text: 'M' }), f)),
    ...(read || []).filter((f) => !(modified || []).includes(f))
      .map((f) => el('li', { title: 'read' }, el('span', { class: 'tag', text: 'R' }), f)),
  ];
  return rows.length ? [el('div', { class: 'section-label', text: 'Files' }), el('ul', { class: 'files' }, rows)] : null;
}

export function recordBody(item) {
  const r = item.full;
  if (!r) return [item.subtitle ? el('p', { class: 'prose', text: item.subtitle }) : null];
  if (item.kind === 'observation') {
    return [
      r.narrative ? el('p', { class: 'prose', text: r.narrative }) : null,
      listSection('Facts', r.facts, (v) => el('ul', { class: 'facts' }, v.map((f) => el('li', { text: f })))),
      listSection('Concepts', r.concepts, chips),
      files(r.files_read, r.files_modified),
    ];
  }
  if (item.kind === 'summary') {
    const fields = [['Request', r.request], ['Investigated', r.investigated], ['Learned', r.learned],
      ['Completed', r.completed], ['Next steps', r.next_steps], ['Notes', r.notes]];
    return [
      el('dl', { class: 'kv' }, fields.filter(([, v]) => v).map(([k, v]) => [el('dt', { text: k }), el('dd', { text: v })])),
      files(r.files_read, r.files_edited),
    ];
  }
  return [el('p', { class: 'prose', text: r.prompt_text })];
}

export async function ensureFull(item) {
  if (item.full || item.kind !== 'observation') return item;
  item.full = await api(`/api/observation/${item.id}`);
  return item;
}
