/* The Corpora view: build a corpus from the feed filters, rebuild, reprime or delete one, and
 * ask its knowledge agent (answers cite observations, which open in the detail panel).
 */

import { api } from './api.js';
import { openById } from './detail.js';
import { confirmDialog, toast } from './dialogs.js';
import { $, $$, clear, el, fill } from './dom.js';
import { corpusFilter } from './filters.js';
import { absTime, fmt } from './format.js';
import { typeClass } from './records.js';

let askCorpus = null;

export async function loadCorpora() {
  const box = $('#corpus-list');
  try {
    const data = await api('/api/corpus');
    clear(box);
    if (!data.corpora.length) {
      box.append(el('p', { class: 'muted', text: 'No corpora yet. Build one from the feed filters: it freezes a focused slice of your history for the knowledge agent.' }));
      return;
    }
    for (const c of data.corpora) box.append(corpusCard(c));
  } catch (e) {
    fill(box, el('div', { class: 'notice notice-error', text: e.message }));
  }
}

function corpusCard(c) {
  const stats = c.stats || {};
  const range = stats.date_range || {};
  const types = Object.entries(stats.type_breakdown || {}).sort((a, b) => b[1] - a[1]).slice(0, 4);
  const node = el('div', { class: `corpus ${askCorpus === c.name ? 'active' : ''}`, dataset: { name: c.name } },
    el('div', { class: 'corpus-top' },
      el('span', { class: 'corpus-name', text: c.name }),
      c.error ? el('span', { class: 'pill pill-bad', text: 'unreadable' })
        : el('span', { class: `pill ${c.primed ? 'pill-live' : ''}`, text: c.primed ? 'primed' : 'not primed' })),
    c.description ? el('p', { class: 'corpus-desc', text: c.description }) : null,
    c.error ? el('p', { class: 'field-error', text: c.error }) : el('div', { class: 'corpus-stats' },
      el('span', { class: 'chip', text: `${fmt(stats.observation_count || 0)} observations` }),
      el('span', { class: 'chip', text: `~${fmt(stats.token_estimate || 0)} tokens` }),
      range.earliest ? el('span', { class: 'chip', text: `${absTime(range.earliest).split(',')[0]} → ${absTime(range.latest).split(',')[0]}` }) : null,
      types.map(([t, n]) => el('span', { class: `chip`, text: `${t.replace('_', ' ')} ${n}` }))),
    el('div', { class: 'corpus-actions' },
      el('button', { class: 'btn btn-sm btn-primary', type: 'button', text: 'Ask', onclick: () => openAsk(c.name) }),
      el('button', { class: 'btn btn-sm', type: 'button', text: 'Rebuild', onclick: () => corpusAction(c.name, 'rebuild') }),
      el('button', { class: 'btn btn-sm', type: 'button', text: 'Reprime', onclick: () => corpusAction(c.name, 'reprime') }),
      el('button', { class: 'btn btn-sm btn-danger', type: 'button', text: 'Delete', onclick: () => deleteCorpus(c.name) })));
  return node;
}

export async function buildCorpus(ev) {
  ev.preventDefault();
  const msg = $('#corpus-form-msg');
  const name = $('#c-name').value;
  const body = { name, ...corpusFilter() };
  const description = $('#c-desc').value.trim();
  const query = $('#c-query').value.trim();
  const limit = $('#c-limit').value.trim();
  if (description) body.description = description;
  if (query) body.query = query;
  if (limit) body.limit = /^\d+$/.test(limit) ? Number(limit) : limit;
  $('#c-build').disabled = true;
  msg.className = 'form-msg';
  msg.textContent = 'Building…';
  try {
    const built = await api('/api/corpus', { method: 'POST', body });
    msg.className = 'form-msg ok';
    msg.textContent = `${built.replaced ? 'Rebuilt' : 'Built'} “${built.name}” with ${fmt(built.stats.observation_count)} observations.`;
    $('#c-name').removeAttribute('aria-invalid');
    await loadCorpora();
    openAsk(built.name);
  } catch (e) {
    msg.className = 'form-msg bad';
    msg.textContent = e.message;
    if (e.data && e.data.error === 'INVALID_CORPUS_NAME') $('#c-name').setAttribute('aria-invalid', 'true');
  } finally {
    $('#c-build').disabled = false;
  }
}

async function corpusAction(name, action) {
  try {
    const result = await api(`/api/corpus/${encodeURIComponent(name)}/${action}`, { method: 'POST' });
    if (action === 'rebuild') {
      toast(`Rebuilt “${name}”: ${fmt(result.stats.observation_count)} observations (+${result.added || 0}, −${result.removed || 0}).`);
    } else {
      toast(`Reprimed “${name}”: a fresh conversation.`);
      if (askCorpus === name) clear($('#answers'));
    }
    loadCorpora();
  } catch (e) { toast(e.message, true); }
}

async function deleteCorpus(name) {
  if (!(await confirmDialog('Delete this corpus?', `“${name}” and its agent conversation. The memories themselves stay.`))) return;
  try {
    await api(`/api/corpus/${encodeURIComponent(name)}`, { method: 'DELETE' });
    toast(`Deleted corpus “${name}”.`);
    if (askCorpus === name) { askCorpus = null; $('#ask-panel').hidden = true; }
    loadCorpora();
  } catch (e) { toast(e.message, true); }
}

function openAsk(name) {
  if (askCorpus !== name) clear($('#answers'));
  askCorpus = name;
  $('#ask-name').textContent = name;
  $('#ask-agent').textContent = '';
  $('#ask-msg').textContent = '';
  $('#ask-panel').hidden = false;
  $$('.corpus').forEach((n) => n.classList.toggle('active', n.dataset.name === name));
  $('#ask-q').focus();
}

export async function ask(ev) {
  ev.preventDefault();
  const question = $('#ask-q').value.trim();
  const msg = $('#ask-msg');
  if (!askCorpus) return;
  if (!question) { msg.className = 'form-msg bad'; msg.textContent = 'Type a question first.'; return; }
  $('#ask-btn').disabled = true;
  msg.className = 'form-msg';
  msg.textContent = 'Thinking…';
  try {
    const r = await api(`/api/corpus/${encodeURIComponent(askCorpus)}/query`, { method: 'POST', body: { question } });
    msg.textContent = '';
    $('#ask-agent').textContent = `answered by ${r.agent}`;
    const usage = r.usage || {};
    const usageText = Object.entries(usage).filter(([, v]) => typeof v === 'number' && v)
      .map(([k, v]) => `${k.replace(/_/g, ' ')} ${fmt(v)}`).join(' · ');
    const sources = r.sources || (r.citations || []).map((id) => ({ id, title: `observation #${id}` }));
    $('#answers').prepend(el('article', { class: 'answer' },
      el('div', { class: 'answer-q', text: question }),
      el('p', { class: 'answer-a', text: r.answer }),
      el('div', { class: 'answer-meta' },
        el('span', { class: 'pill pill-accent', text: r.agent }),
        el('span', { text: `turn ${r.turn || 1}` }),
        usageText ? el('span', { text: usageText }) : null,
        r.auto_primed ? el('span', { text: 'primed automatically' }) : null,
        r.reprimed ? el('span', { text: `re-primed: ${r.reprime_reason || ''}` }) : null),
      sources.length ? [
        el('div', { class: 'section-label', text: `Cited (${sources.length})` }),
        el('ul', { class: 'cites' }, sources.map((s) => el('li', {},
          s.type ? el('span', { class: `type-tag ${typeClass(s.type)}`, text: String(s.type).replace('_', ' ') }) : null,
          el('button', { class: 'linklike', type: 'button', text: `#${s.id} ${s.title}`, onclick: () => openById(s.id) })))),
      ] : el('p', { class: 'muted small', text: 'No observations cited.' })));
    $('#ask-q').value = '';
    loadCorpora();
  } catch (e) {
    msg.className = 'form-msg bad';
    msg.textContent = e.message;
  } finally {
    $('#ask-btn').disabled = false;
  }
}
