/* The feed: three paginated lists (observations, summaries, prompts) merged by date, loaded as
 * you scroll. A list whose next page may hold newer items holds back older ones (the horizon),
 * so the merged order never jumps. Every reset bumps `feed.generation`; a late answer for an old
 * view is dropped.
 */

import { LIST_PATH, SEARCH_TYPE, api, qs } from './api.js';
import { place } from './cards.js';
import { $, $$, clear } from './dom.js';
import { PAGE, feed, feedEl, updateCount } from './feed-state.js';
import { describeFilters, kindsFor, obsTypeOf, readFilters } from './filters.js';
import { FROM, fromHit } from './records.js';

async function fetchPage(source, offset) {
  const f = feed.filters;
  if (!source.viaSearch) {
    const data = await api(`${LIST_PATH[source.kind]}?${qs({ offset, limit: PAGE, project: f.project, platform_source: f.platform })}`);
    return { items: data.items.map(FROM[source.kind]), hasMore: data.hasMore };
  }
  // Type and date filters: the search API lists by date with filters alone.
  const data = await api(`/api/search?${qs({
    format: 'json', kinds: SEARCH_TYPE[source.kind], order_by: 'date_desc', limit: PAGE, offset,
    project: f.project, types: source.kind === 'observation' ? obsTypeOf(f.type) : '',
    since: f.from, until: f.to, platform_source: f.platform,
  })}`);
  const hits = data[SEARCH_TYPE[source.kind]] || [];
  return { items: hits.map(fromHit), hasMore: hits.length === PAGE };
}

export function resetFeed() {
  prepareFeed();
  loadMore();
}

/** A fresh, empty feed for the current filters (nothing loaded yet). */
export function prepareFeed() {
  feed.generation += 1;
  feed.mode = 'feed';
  feed.search = null;
  feed.newWhileSearching = 0;
  feed.filters = readFilters();
  const viaSearch = Boolean(feed.filters.from || feed.filters.to || obsTypeOf(feed.filters.type));
  feed.sources = kindsFor(feed.filters.type).map((kind) => ({ kind, offset: 0, hasMore: true, last: Infinity, buffer: [], viaSearch }));
  feed.items.clear();
  feed.done = false;
  feed.loading = false;
  clear(feedEl());
  $('#feed-title').textContent = 'Live feed';
  $('#clear-search').hidden = true;
  $('#new-banner').hidden = true;
  $('#feed-error').hidden = true;
  $('#feed-info').hidden = true;
  describeFilters();
}

export async function loadMore() {
  if (feed.mode === 'search') return; // search.js pages the results (loadNextPage)
  if (feed.loading || feed.done) return;
  const generation = feed.generation;
  feed.loading = true;
  feedEl().setAttribute('aria-busy', 'true');
  updateCount();
  try {
    const blocking = feed.sources.filter((s) => s.hasMore && s.buffer.length === 0);
    const pages = await Promise.all(blocking.map((s) => fetchPage(s, s.offset)));
    if (generation !== feed.generation) return;
    blocking.forEach((s, i) => {
      const page = pages[i];
      s.offset += page.items.length;
      s.hasMore = page.hasMore && page.items.length > 0;
      s.buffer.push(...page.items);
      if (page.items.length) s.last = page.items[page.items.length - 1].epoch;
    });
    // Nothing older than the horizon can be placed yet: a list with more may hold newer.
    const horizon = Math.max(-Infinity, ...feed.sources.filter((s) => s.hasMore).map((s) => s.last));
    const ready = [];
    for (const s of feed.sources) {
      const keep = [];
      for (const item of s.buffer) (item.epoch >= horizon ? ready : keep).push(item);
      s.buffer = keep;
    }
    ready.sort((a, b) => b.epoch - a.epoch || b.id - a.id).forEach((item) => place(item));
    feed.done = feed.sources.every((s) => !s.hasMore && s.buffer.length === 0);
    $('#feed-error').hidden = true;
  } catch (e) {
    if (generation === feed.generation) showFeedError(e);
    feed.done = true;
  } finally {
    if (generation === feed.generation) {
      feed.loading = false;
      feedEl().setAttribute('aria-busy', 'false');
      updateCount();
    }
  }
  if (generation === feed.generation && !feed.done && sentinelVisible()) setTimeout(loadMore, 0);
}

/** After a reconnect (or a lagged stream): merge the newest page of each list. */
export async function refreshHead() {
  if (feed.mode !== 'feed') return;
  const generation = feed.generation;
  try {
    const pages = await Promise.all(feed.sources.map((s) => fetchPage(s, 0)));
    if (generation !== feed.generation) return;
    const oldest = Math.min(Infinity, ...$$('.card', feedEl()).map((n) => Number(n.dataset.epoch)));
    pages.flatMap((p) => p.items)
      .filter((item) => feed.done || item.epoch >= oldest)
      .forEach((item) => place(item, { live: true }));
    updateCount();
  } catch (e) {
    showFeedError(e);
  }
}

export function showFeedError(e) {
  const node = $('#feed-error');
  node.textContent = `Could not load: ${e.message}`;
  node.hidden = false;
}

export function sentinelVisible() {
  const rect = $('#sentinel').getBoundingClientRect();
  return rect.top < window.innerHeight + 400;
}
