/* The feed filters (project, platform, type, dates): read from the form, matched against a
 * live item, described in words, and turned into the corpus filter the Corpora view builds with.
 */

import { $ } from './dom.js';
import { feed } from './feed-state.js';

const KINDS = ['observation', 'summary', 'prompt'];

export function kindsFor(type) {
  if (type === 'all') return KINDS;
  if (type === 'summaries') return ['summary'];
  if (type === 'prompts') return ['prompt'];
  return ['observation'];
}
export const obsTypeOf = (type) => (['all', 'observations', 'summaries', 'prompts'].includes(type) ? '' : type);

export function readFilters() {
  return { project: $('#f-project').value, platform: $('#f-platform').value, type: $('#f-type').value, from: $('#f-from').value, to: $('#f-to').value };
}

export function matches(item) {
  const f = feed.filters;
  if (f.project && item.project !== f.project) return false;
  // Summaries and prompts carry no platform: the list routes filtered them already.
  if (f.platform && item.platform && item.platform !== f.platform) return false;
  if (!kindsFor(f.type).includes(item.kind)) return false;
  const type = obsTypeOf(f.type);
  if (type && item.type !== type) return false;
  if (f.from && item.epoch < Date.parse(`${f.from}T00:00:00Z`)) return false;
  if (f.to && item.epoch > Date.parse(`${f.to}T23:59:59.999Z`)) return false;
  return true;
}

export function describeFilters() {
  const f = feed.filters;
  const parts = [];
  if (f.project) parts.push(`project ${f.project}`);
  if (f.platform) parts.push(`platform ${f.platform}`);
  if (f.type !== 'all') parts.push($('#f-type').selectedOptions[0]?.textContent.toLowerCase() || f.type);
  if (f.from || f.to) parts.push(`${f.from || '…'} → ${f.to || '…'}`);
  $('#filter-note').textContent = parts.length ? `Showing ${parts.join(', ')}.` : '';
  $('#c-filters').textContent = corpusFilterText();
}

export function corpusFilter() {
  const f = feed.filters;
  const body = {};
  if (f.project) body.project = f.project;
  if (f.platform) body.platform_source = f.platform;
  if (obsTypeOf(f.type)) body.types = [obsTypeOf(f.type)];
  if (f.from) body.since = f.from;
  if (f.to) body.until = f.to;
  return body;
}

function corpusFilterText() {
  const parts = Object.entries(corpusFilter()).map(([k, v]) => `${k}=${Array.isArray(v) ? v.join(',') : v}`);
  return parts.length ? parts.join('; ') : 'none (every observation)';
}
