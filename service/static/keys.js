/* Keyboard: / to search, j/k to move between cards, Enter to open, Escape to clear or close. */

import { closeDetail, openDetail, selectedKey } from './detail.js';
import { $, $$ } from './dom.js';
import { feed, feedEl } from './feed-state.js';
import { resetFeed } from './feed.js';
import { currentView, showView } from './views.js';

function typing(target) {
  return target instanceof HTMLElement && (target.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(target.tagName));
}

function moveCard(step) {
  const cards = $$('.card', feedEl());
  if (!cards.length) return;
  const index = cards.indexOf(document.activeElement.closest?.('.card'));
  const next = cards[Math.max(0, Math.min(cards.length - 1, index < 0 ? 0 : index + step))];
  next.focus();
  next.scrollIntoView({ block: 'nearest' });
}

export function onKey(ev) {
  if (ev.defaultPrevented || ev.ctrlKey || ev.metaKey || ev.altKey) return;
  if ($('#confirm').open) return;
  if (ev.key === '/' && !typing(ev.target)) {
    ev.preventDefault();
    showView('feed');
    $('#q').focus();
    $('#q').select();
    return;
  }
  if (ev.key === 'Escape') {
    if (ev.target === $('#q') && $('#q').value) { $('#q').value = ''; resetFeed(); return; }
    if (selectedKey) { closeDetail(); return; }
    return;
  }
  if (typing(ev.target) || currentView !== 'feed') return;
  if (ev.key === 'j') { ev.preventDefault(); moveCard(1); }
  if (ev.key === 'k') { ev.preventDefault(); moveCard(-1); }
  if (ev.key === 'Enter' && ev.target.classList?.contains('card')) {
    const entry = feed.items.get(ev.target.dataset.key);
    if (entry) { ev.preventDefault(); openDetail(entry.item); }
  }
}
