/* Cards: one feed item as a card that expands in place, and its placement in date order. */

import { openDetail } from './detail.js';
import { toast } from './dialogs.js';
import { $, clear, el } from './dom.js';
import { feed, feedEl } from './feed-state.js';
import { timeEl } from './format.js';
import { ensureFull, recordBody, typeClass, typeLabel } from './records.js';

function card(item) {
  const base = `${item.kind}-${item.id}`;
  const toggle = el('button', {
    class: 'card-toggle', type: 'button', id: `title-${base}`,
    'aria-expanded': 'false', 'aria-controls': `body-${base}`, text: item.title || '(untitled)',
  });
  const body = el('div', { class: 'card-body', id: `body-${base}`, hidden: true });
  const node = el('article', {
    class: `card ${typeClass(item.type)}`, tabindex: '0', 'aria-labelledby': `title-${base}`,
    dataset: { key: item.key, epoch: String(item.epoch) },
  },
  el('div', { class: 'card-top' },
    el('span', { class: 'type-tag', text: typeLabel(item) }),
    timeEl(item.epoch, 'card-time')),
  el('h3', { class: 'card-title' }, toggle),
  item.subtitle ? el('p', { class: 'card-sub', text: item.subtitle }) : null,
  el('div', { class: 'card-meta' },
    el('span', { class: 'chip chip-project', text: item.project || '—' }),
    item.platform ? el('span', { class: 'chip chip-platform', title: 'agent platform', text: item.platform }) : null,
    el('span', { text: `#${item.id}` })),
  body);
  toggle.addEventListener('click', () => toggleCard(item.key));
  return node;
}

async function toggleCard(key) {
  const entry = feed.items.get(key);
  if (!entry) return;
  const toggle = $('.card-toggle', entry.node);
  const body = $('.card-body', entry.node);
  const open = toggle.getAttribute('aria-expanded') === 'true';
  if (open) {
    toggle.setAttribute('aria-expanded', 'false');
    body.hidden = true;
    return;
  }
  try { await ensureFull(entry.item); } catch (e) { toast(e.message, true); }
  clear(body);
  body.append(...recordBody(entry.item).flat(Infinity).filter(Boolean),
    el('div', { class: 'card-actions' },
      el('button', { class: 'btn btn-sm', type: 'button', text: 'Details & timeline', onclick: () => openDetail(entry.item) })));
  toggle.setAttribute('aria-expanded', 'true');
  body.hidden = false;
}

/** Put an item in the feed in date order (newest first); false when it was already there. */
export function place(item, { live = false, append = false } = {}) {
  const known = feed.items.get(item.key);
  if (known) {
    if (!known.item.full && item.full) known.item.full = item.full;
    return false;
  }
  const node = card(item);
  feed.items.set(item.key, { item, node });
  const list = feedEl();
  if (append) {
    list.append(node);
  } else {
    // Scan from the end: a page of older items appends in O(1); a live one lands on top.
    let after = null;
    for (let other = list.lastElementChild; other; other = other.previousElementSibling) {
      if (Number(other.dataset.epoch) >= item.epoch) { after = other; break; }
    }
    list.insertBefore(node, after ? after.nextElementSibling : list.firstElementChild);
  }
  if (live) {
    node.classList.add('fresh');
    setTimeout(() => node.classList.remove('fresh'), 5000);
  }
  return true;
}
