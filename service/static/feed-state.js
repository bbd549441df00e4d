/* The feed's state (what it shows, how each list is paged, which search runs) and the count
 * line under its title. Every card is keyed by kind+id in `feed.items`, so an item that arrives
 * twice (a page and a live event) is shown once.
 */

import { $ } from './dom.js';

export const PAGE = 20;

export const feedEl = () => $('#feed');
export const feed = {
  mode: 'feed', // feed | search
  generation: 0, // bumps on every reset: late answers of an old view are dropped
  sources: [],
  items: new Map(), // key -> {item, node}
  loading: false,
  done: false,
  search: null,
  newWhileSearching: 0,
  filters: { project: '', platform: '', type: 'all', from: '', to: '' },
};

export function removeItem(key) {
  const entry = feed.items.get(key);
  if (!entry) return false;
  entry.node.remove();
  feed.items.delete(key);
  const source = feed.sources.find((s) => s.kind === entry.item.kind);
  if (source && source.offset > 0) source.offset -= 1; // keep offset paging from skipping one
  updateCount();
  return true;
}

export function updateCount() {
  const n = feed.items.size;
  const label = feed.mode === 'search' ? `${n} result${n === 1 ? '' : 's'}` : `${n} shown`;
  $('#feed-count').textContent = n ? label : '';
  const empty = $('#feed-empty');
  const idle = !feed.loading && (feed.mode === 'search' ? !(feed.search && feed.search.more) : feed.done);
  empty.hidden = !(n === 0 && idle);
  if (!empty.hidden) {
    empty.textContent = feed.mode === 'search'
      ? 'Nothing matches this search. Try other words, or another ranking.'
      : 'No memories here yet. They appear live as you work with Claude Code.';
  }
  $('#sentinel').textContent = feed.loading ? 'Loading…' : '';
}
