/* Search: the hybrid search API with the feed's filters, shown in the feed's place. */

import { SEARCH_TYPE, api, qs } from './api.js';
import { place } from './cards.js';
import { $ } from './dom.js';
import { PAGE, feed, updateCount } from './feed-state.js';
import { loadMore, prepareFeed, resetFeed, sentinelVisible, showFeedError } from './feed.js';
import { describeFilters, kindsFor, obsTypeOf } from './filters.js';
import { fromHit } from './records.js';

export function startSearch(query) {
  const q = query.trim();
  if (!q) { resetFeed(); return; }
  prepareFeed();
  feed.mode = 'search';
  feed.search = { q, mode: $('#search-mode').value, offset: 0, more: true };
  feed.done = true;
  $('#feed-title').textContent = `Results for “${q}”`;
  $('#clear-search').hidden = false;
  $('#c-query').value = q;
  describeFilters();
  loadSearchPage();
}

async function loadSearchPage() {
  const s = feed.search;
  if (!s || !s.more || feed.loading) return;
  const generation = feed.generation;
  const f = feed.filters;
  feed.loading = true;
  updateCount();
  try {
    const data = await api(`/api/search?${qs({
      format: 'json', query: s.q, mode: s.mode, limit: PAGE, offset: s.offset,
      kinds: kindsFor(f.type).map((k) => SEARCH_TYPE[k]).join(','),
      project: f.project, types: obsTypeOf(f.type), since: f.from, until: f.to,
      platform_source: f.platform,
    })}`);
    if (generation !== feed.generation) return;
    [...data.observations, ...data.sessions, ...data.prompts].forEach((hit) => place(fromHit(hit), { append: true }));
    s.offset += PAGE;
    s.more = [data.observations, data.sessions, data.prompts].some((list) => list.length === PAGE);
    const info = $('#feed-info');
    info.hidden = !data.degraded;
    if (data.degraded) info.textContent = `Full-text ranking only: ${data.degraded}.`;
  } catch (e) {
    if (generation === feed.generation) { showFeedError(e); s.more = false; }
  } finally {
    if (generation === feed.generation) { feed.loading = false; updateCount(); }
  }
  if (generation === feed.generation && s.more && sentinelVisible()) setTimeout(loadSearchPage, 0);
}

/** The next page of what the feed shows (scrolling near its end): search results or the lists. */
export function loadNextPage() {
  return feed.mode === 'search' ? loadSearchPage() : loadMore();
}
