/* The Settings view: one control per editable key, validated by the service; its refusals are
 * shown next to the field they name.
 */

import { api } from './api.js';
import { $, $$, clear, el, fill } from './dom.js';

let settingsFields = [];

function controlFor(field) {
  const id = `s-${field.name}`;
  const common = { id, name: field.name, 'aria-describedby': `${id}-help ${id}-err` };
  if (field.type === 'boolean') {
    const input = el('input', { ...common, type: 'checkbox' });
    input.checked = Boolean(field.value);
    return input;
  }
  if (field.type === 'choice') {
    const select = el('select', common, (field.options || []).map((o) => el('option', { value: o, text: o })));
    select.value = field.apply === 'restart' && field.saved !== null && field.saved !== undefined ? field.saved : field.value;
    return select;
  }
  if (field.type === 'list') {
    const area = el('textarea', { ...common, rows: '3', spellcheck: 'false' });
    area.value = (field.value || []).join('\n');
    return area;
  }
  const input = el('input', { ...common, type: 'number', inputmode: 'numeric', step: '1', min: field.minimum, max: field.maximum });
  input.value = String(field.value);
  return input;
}

function readControl(field) {
  const node = $(`#s-${field.name}`);
  if (field.type === 'boolean') return node.checked;
  if (field.type === 'list') return node.value.split('\n').map((s) => s.trim()).filter(Boolean);
  if (field.type === 'integer') {
    const text = node.value.trim();
    return /^-?\d+$/.test(text) ? Number(text) : text; // anything else: let the service refuse it
  }
  return node.value;
}

function initialOf(field) {
  if (field.type === 'choice' && field.apply === 'restart' && field.saved !== null && field.saved !== undefined) return field.saved;
  return field.value;
}

function changedSettings() {
  const changes = {};
  for (const field of settingsFields) {
    const value = readControl(field);
    if (JSON.stringify(value) !== JSON.stringify(initialOf(field))) changes[field.name] = value;
  }
  return changes;
}
export const settingsDirty = () => settingsFields.length > 0 && Object.keys(changedSettings()).length > 0;

export async function loadSettings() {
  const box = $('#settings-fields');
  try {
    const data = await api('/api/settings');
    settingsFields = data.fields;
    $('#settings-file').textContent = data.file;
    clear(box);
    const groups = new Map();
    for (const field of data.fields) {
      if (!groups.has(field.group)) groups.set(field.group, []);
      groups.get(field.group).push(field);
    }
    for (const [group, fields] of groups) {
      box.append(el('fieldset', { class: 'settings-group' }, el('legend', { text: group }),
        fields.map((field) => {
          const id = `s-${field.name}`;
          const bounds = field.minimum !== undefined ? ` (${field.minimum}–${field.maximum ?? '∞'})` : '';
          const notes = [];
          if (field.env) notes.push(`Set by ${field.env}: the environment wins over settings.json.`);
          if (field.apply === 'restart') {
            notes.push(field.saved !== null && field.saved !== undefined && field.saved !== field.value
              ? `Saved as ${field.saved}; running with ${field.value} until the service restarts.`
              : 'Takes effect after a restart.');
          }
          return el('div', { class: 'setting' },
            el('label', { for: id, text: field.label }),
            el('div', { class: 'help', id: `${id}-help`, text: `${field.help}${bounds}` }),
            el('div', { class: 'control' }, controlFor(field),
              notes.map((n) => el('span', { class: 'note', text: n })),
              el('span', { class: 'field-error', id: `${id}-err`, 'aria-live': 'polite' })));
        })));
    }
  } catch (e) {
    fill(box, el('div', { class: 'notice notice-error', text: e.message }));
  }
}

export async function saveSettings(ev) {
  ev.preventDefault();
  const msg = $('#settings-msg');
  $$('#settings-fields .field-error').forEach((n) => { n.textContent = ''; });
  $$('#settings-fields [aria-invalid]').forEach((n) => n.removeAttribute('aria-invalid'));
  const changes = changedSettings();
  if (!Object.keys(changes).length) {
    msg.className = 'form-msg';
    msg.textContent = 'Nothing changed.';
    return;
  }
  try {
    const result = await api('/api/settings', { method: 'PUT', body: changes });
    msg.className = 'form-msg ok';
    msg.textContent = `Saved. ${result.message}.`;
    await loadSettings();
  } catch (e) {
    msg.className = 'form-msg bad';
    msg.textContent = `Refused: ${e.message}`;
    for (const problem of (e.data && e.data.errors) || []) {
      const err = $(`#s-${CSS.escape(problem.field)}-err`);
      const input = $(`#s-${CSS.escape(problem.field)}`);
      if (err) err.textContent = problem.message;
      if (input) input.setAttribute('aria-invalid', 'true');
    }
  }
}
