/* workbench viewer: plain JavaScript, no build step, no dependencies, no network but this origin.
 *
 * Safety rule: stored memories are untrusted text (a tool output can contain anything). Every
 * value that comes from the API reaches the page through `el()` below, which only ever sets
 * textContent and attributes, never parsed as HTML; the page's Content-Security-Policy forbids
 * inline script on top of that. Class names derived from data are whitelisted.
 *
 * Live updates: one EventSource on /stream. The browser reconnects by itself and sends
 * Last-Event-ID, so the service replays what we missed; after every reconnect we also re-fetch
 * the first page of each list, and every card is keyed by kind+id, so a gap is filled without
 * losing or doubling a card, even across a service restart.
 */
(() => {
  'use strict';

  const PAGE = 20;
  const OBS_TYPES = ['decision', 'bugfix', 'feature', 'refactor', 'discovery', 'change',
    'security_alert', 'security_note'];
  const KINDS = ['observation', 'summary', 'prompt'];
  const LIST_PATH = { observation: '/api/observations', summary: '/api/summaries', prompt: '/api/prompts' };
  const SEARCH_TYPE = { observation: 'observations', summary: 'sessions', prompt: 'prompts' };
  const LIVE_EVENTS = ['new_observation', 'new_summary', 'new_prompt', 'observation_deleted',
    'processing_status', 'queued', 'session_started', 'session_completed', 'settings_changed', 'lagged'];

  const $ = (selector, root = document) => root.querySelector(selector);
  const $$ = (selector, root = document) => Array.from(root.querySelectorAll(selector));

  // ------------------------------------------------------------------------------------------
  // DOM: the only way anything reaches the page (text and attributes, never markup)
  // ------------------------------------------------------------------------------------------
  function el(tag, props, ...children) {
    const node = document.createElement(tag);
    if (props) {
      for (const [key, value] of Object.entries(props)) {
        if (value === null || value === undefined || value === false) continue;
        if (key === 'class') node.className = value;
        else if (key === 'text') node.textContent = String(value);
        else if (key === 'dataset') Object.assign(node.dataset, value);
        else if (key.startsWith('on') && typeof value === 'function') node.addEventListener(key.slice(2), value);
        else node.setAttribute(key, value === true ? '' : String(value));
      }
    }
    for (const child of children.flat(Infinity)) {
      if (child === null || child === undefined || child === false) continue;
      node.append(child instanceof Node ? child : String(child));
    }
    return node;
  }

  function clear(node) {
    while (node.firstChild) node.firstChild.remove();
    return node;
  }

  /** Replace a node's children; null/false children are skipped (Node.append would print them). */
  function fill(node, ...children) {
    clear(node);
    for (const child of children.flat(Infinity)) {
      if (child === null || child === undefined || child === false) continue;
      node.append(child instanceof Node ? child : String(child));
    }
    return node;
  }

  function typeClass(type) {
    return 't-' + (OBS_TYPES.includes(type) || type === 'summary' || type === 'prompt' ? type : 'other');
  }

  // ------------------------------------------------------------------------------------------
  // API
  // ------------------------------------------------------------------------------------------
  class ApiError extends Error {
    constructor(message, status, data) {
      super(message);
      this.status = status;
      this.data = data;
    }
  }

  async function api(path, { method = 'GET', body } = {}) {
    const init = { method, headers: { Accept: 'application/json' } };
    if (body !== undefined) {
      init.headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    let response;
    try {
      response = await fetch(path, init);
    } catch (_) {
      throw new ApiError('the service is not answering; is it running?', 0, null);
    }
    const text = await response.text();
    let data = null;
    if (text) {
      try { data = JSON.parse(text); } catch (_) { data = text; }
    }
    if (!response.ok) {
      const message = (data && typeof data === 'object' && data.message) || `${response.status} ${response.statusText}`;
      throw new ApiError(message, response.status, data);
    }
    return data;
  }

  function qs(params) {
    const search = new URLSearchParams();
    for (const [key, value] of Object.entries(params)) {
      if (value === '' || value === null || value === undefined) continue;
      search.set(key, String(value));
    }
    return search.toString();
  }

  // ------------------------------------------------------------------------------------------
  // Small helpers: time, numbers, toast, throttle
  // ------------------------------------------------------------------------------------------
  function relTime(epoch) {
    const seconds = Math.round((Date.now() - epoch) / 1000);
    if (seconds < 45) return 'just now';
    const minutes = Math.round(seconds / 60);
    if (minutes < 60) return `${minutes} min ago`;
    const hours = Math.round(minutes / 60);
    if (hours < 24) return `${hours} h ago`;
    const days = Math.round(hours / 24);
    if (days < 7) return `${days} d ago`;
    return new Date(epoch).toLocaleDateString(undefined, { year: 'numeric', month: 'short', day: 'numeric' });
  }

  function absTime(value) {
    const date = typeof value === 'number' ? new Date(value) : new Date(String(value));
    return Number.isNaN(date.getTime()) ? String(value || '') : date.toLocaleString();
  }

  function timeEl(epoch, cls) {
    return el('time', {
      class: cls, datetime: new Date(epoch).toISOString(), title: absTime(epoch),
      dataset: { epoch: String(epoch) }, text: relTime(epoch),
    });
  }

  function duration(seconds) {
    const minutes = Math.floor(seconds / 60);
    if (minutes < 1) return 'under a minute';
    if (minutes < 60) return `${minutes} min`;
    const hours = Math.floor(minutes / 60);
    return hours < 48 ? `${hours} h ${minutes % 60} min` : `${Math.floor(hours / 24)} days`;
  }

  const fmt = (n) => (typeof n === 'number' ? n.toLocaleString() : String(n ?? '—'));

  function firstLine(text, limit = 160) {
    const line = String(text || '').split('\n').map((s) => s.trim()).find(Boolean) || '';
    return line.length > limit ? line.slice(0, limit - 1).trimEnd() + '…' : line;
  }

  let toastTimer = null;
  function toast(message, bad = false) {
    const node = $('#toast');
    node.textContent = message;
    node.classList.toggle('bad', bad);
    node.hidden = false;
    clearTimeout(toastTimer);
    toastTimer = setTimeout(() => { node.hidden = true; }, bad ? 7000 : 4000);
  }

  function throttle(fn, ms) {
    let timer = null;
    return () => {
      if (timer) return;
      timer = setTimeout(() => { timer = null; fn(); }, ms);
    };
  }

  function confirmDialog(title, text, okLabel = 'Delete') {
    const dialog = $('#confirm');
    $('#confirm-title').textContent = title;
    $('#confirm-text').textContent = text;
    $('#confirm-ok').textContent = okLabel;
    dialog.returnValue = '';
    dialog.showModal();
    $('#confirm-cancel').focus();
    return new Promise((resolve) => {
      dialog.addEventListener('close', () => resolve(dialog.returnValue === 'ok'), { once: true });
    });
  }

  // ------------------------------------------------------------------------------------------
  // Records → feed items
  // ------------------------------------------------------------------------------------------
  function fromObservation(o) {
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
  function fromHit(h) {
    return { key: `${h.kind}:${h.id}`, kind: h.kind, id: h.id, epoch: h.created_at_epoch,
      project: h.project, platform: h.platform_source, type: h.type, title: h.title, subtitle: h.subtitle, full: null };
  }
  const FROM = { observation: fromObservation, summary: fromSummary, prompt: fromPrompt };

  function typeLabel(item) {
    return item.kind === 'observation' ? String(item.type || 'observation').replace('_', ' ') : item.kind;
  }

  // ------------------------------------------------------------------------------------------
  // Rendering one record's content (cards and the detail panel share it)
  // ------------------------------------------------------------------------------------------
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

  function recordBody(item) {
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

  // ------------------------------------------------------------------------------------------
  // Cards
  // ------------------------------------------------------------------------------------------
  const feedEl = () => $('#feed');
  const feed = {
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

  async function ensureFull(item) {
    if (item.full || item.kind !== 'observation') return item;
    item.full = await api(`/api/observation/${item.id}`);
    return item;
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
  function place(item, { live = false, append = false } = {}) {
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

  function removeItem(key) {
    const entry = feed.items.get(key);
    if (!entry) return false;
    entry.node.remove();
    feed.items.delete(key);
    const source = feed.sources.find((s) => s.kind === entry.item.kind);
    if (source && source.offset > 0) source.offset -= 1; // keep offset paging from skipping one
    updateCount();
    return true;
  }

  function updateCount() {
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

  // ------------------------------------------------------------------------------------------
  // The feed: three paginated lists merged by date, loaded as you scroll
  // ------------------------------------------------------------------------------------------
  function kindsFor(type) {
    if (type === 'all') return KINDS;
    if (type === 'summaries') return ['summary'];
    if (type === 'prompts') return ['prompt'];
    return ['observation'];
  }
  const obsTypeOf = (type) => (['all', 'observations', 'summaries', 'prompts'].includes(type) ? '' : type);

  function readFilters() {
    return { project: $('#f-project').value, platform: $('#f-platform').value, type: $('#f-type').value, from: $('#f-from').value, to: $('#f-to').value };
  }

  function matches(item) {
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

  async function fetchPage(source, offset) {
    const f = feed.filters;
    if (!source.viaSearch) {
      const data = await api(`${LIST_PATH[source.kind]}?${qs({ offset, limit: PAGE, project: f.project, platform_source: f.platform })}`);
      return { items: data.items.map(FROM[source.kind]), hasMore: data.hasMore };
    }
    // Type and date filters: the search API lists by date with filters alone.
    const data = await api(`/api/search?${qs({
      format: 'json', type: SEARCH_TYPE[source.kind], orderBy: 'date_desc', limit: PAGE, offset,
      project: f.project, obs_type: source.kind === 'observation' ? obsTypeOf(f.type) : '',
      dateStart: f.from, dateEnd: f.to, platform_source: f.platform,
    })}`);
    const hits = data[SEARCH_TYPE[source.kind]] || [];
    return { items: hits.map(fromHit), hasMore: hits.length === PAGE };
  }

  function resetFeed() {
    prepareFeed();
    loadMore();
  }

  /** A fresh, empty feed for the current filters (nothing loaded yet). */
  function prepareFeed() {
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

  async function loadMore() {
    if (feed.mode === 'search') return loadSearchPage();
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
  async function refreshHead() {
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

  function showFeedError(e) {
    const node = $('#feed-error');
    node.textContent = `Could not load: ${e.message}`;
    node.hidden = false;
  }

  function sentinelVisible() {
    const rect = $('#sentinel').getBoundingClientRect();
    return rect.top < window.innerHeight + 400;
  }

  function describeFilters() {
    const f = feed.filters;
    const parts = [];
    if (f.project) parts.push(`project ${f.project}`);
    if (f.platform) parts.push(`platform ${f.platform}`);
    if (f.type !== 'all') parts.push($('#f-type').selectedOptions[0]?.textContent.toLowerCase() || f.type);
    if (f.from || f.to) parts.push(`${f.from || '…'} → ${f.to || '…'}`);
    $('#filter-note').textContent = parts.length ? `Showing ${parts.join(', ')}.` : '';
    $('#c-filters').textContent = corpusFilterText();
  }

  // ------------------------------------------------------------------------------------------
  // Search (the hybrid search API), with the same filters
  // ------------------------------------------------------------------------------------------
  function startSearch(query) {
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
        type: kindsFor(f.type).map((k) => SEARCH_TYPE[k]).join(','),
        project: f.project, obs_type: obsTypeOf(f.type), dateStart: f.from, dateEnd: f.to,
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

  // ------------------------------------------------------------------------------------------
  // Detail: the full record, its timeline and its injection history
  // ------------------------------------------------------------------------------------------
  let selectedKey = null;

  function closeDetail() {
    const panel = $('#detail');
    fill(panel, el('div', { class: 'detail-placeholder' },
      el('p', { class: 'muted', text: 'Select a memory to read it in full, see what happened around it, and how often it was injected.' })));
    const previous = selectedKey && feed.items.get(selectedKey);
    $$('.card.selected').forEach((n) => n.classList.remove('selected'));
    selectedKey = null;
    if (previous) previous.node.focus();
  }

  async function openDetail(item) {
    selectedKey = item.key;
    $$('.card.selected').forEach((n) => n.classList.remove('selected'));
    const entry = feed.items.get(item.key);
    if (entry) entry.node.classList.add('selected');
    const panel = $('#detail');
    fill(panel, el('p', { class: 'muted', text: 'Loading…' }));
    try { await ensureFull(item); } catch (e) {
      fill(panel, el('div', { class: 'notice notice-error', text: e.message }));
      return;
    }
    if (selectedKey !== item.key) return;
    const r = item.full || {};
    const title = el('h2', { class: 'detail-title', id: 'detail-title', tabindex: '-1', text: item.title || '(untitled)' });
    const timelineBox = el('div', {}, el('p', { class: 'muted small', text: 'Loading timeline…' }));
    const historyBox = item.kind === 'observation' ? el('div', {}, el('p', { class: 'muted small', text: 'Loading…' })) : null;
    fill(panel,
      el('div', { class: `detail-head ${typeClass(item.type)}` },
        el('span', { class: 'type-tag', text: typeLabel(item) }),
        el('button', { class: 'btn btn-ghost btn-sm', type: 'button', text: 'Close', 'aria-label': 'Close detail', onclick: closeDetail })),
      title,
      item.subtitle ? el('p', { class: 'card-sub', text: item.subtitle }) : null,
      el('div', { class: 'detail-meta' },
        el('span', { class: 'chip chip-project', text: item.project || '—' }),
        r.platform_source ? el('span', { class: 'chip chip-platform', title: 'agent platform', text: r.platform_source }) : null,
        el('span', { class: 'chip', text: `#${item.id}` }),
        el('span', { class: 'chip', title: absTime(item.epoch), text: absTime(item.epoch) }),
        r.generated_by ? el('span', { class: 'chip', text: `by ${r.generated_by}` }) : null,
        r.discovery_tokens ? el('span', { class: 'chip', text: `${fmt(r.discovery_tokens)} discovery tokens` }) : null),
      ...recordBody(item).flat(Infinity).filter(Boolean),
      historyBox ? el('section', { 'aria-labelledby': 'hist-h' }, el('h3', { id: 'hist-h', text: 'Injection history' }), historyBox) : null,
      el('section', { 'aria-labelledby': 'tl-h' }, el('h3', { id: 'tl-h', text: 'Timeline' }), timelineBox),
      item.kind === 'observation'
        ? el('section', {}, el('button', { class: 'btn btn-danger', type: 'button', id: 'delete-btn', text: 'Delete this memory…', onclick: () => deleteObservation(item) }))
        : null,
    );
    title.focus({ preventScroll: true });
    loadTimeline(item, timelineBox);
    if (historyBox) loadHistory(item, historyBox);
  }

  async function openById(id) {
    showView('feed');
    const key = `observation:${id}`;
    const entry = feed.items.get(key);
    if (entry) { entry.node.scrollIntoView({ block: 'nearest' }); return openDetail(entry.item); }
    try {
      const item = fromObservation(await api(`/api/observation/${id}`));
      openDetail(item);
    } catch (e) { toast(e.message, true); }
  }

  function anchorOf(item) {
    if (item.kind === 'observation') return String(item.id);
    if (item.kind === 'summary') return `S${item.id}`;
    return new Date(item.epoch).toISOString();
  }

  async function loadTimeline(item, box) {
    try {
      const data = await api(`/api/timeline?${qs({ anchor: anchorOf(item), depth_before: 6, depth_after: 6 })}`);
      if (selectedKey !== item.key) return;
      const rows = (data.items || []).map((t) => {
        const isObs = t.kind === 'observation' && !t.is_anchor;
        const label = isObs
          ? el('button', { class: 'linklike tl-title', type: 'button', text: t.title, onclick: () => openById(t.id) })
          : el('span', { class: 'tl-title', text: t.title });
        return el('li', { class: `${typeClass(t.type)} ${t.is_anchor ? 'anchor' : ''}` },
          el('span', { class: 'tl-time', text: `${absTime(t.created_at_epoch)} · ${t.kind === 'observation' ? String(t.type).replace('_', ' ') : t.kind}` }),
          label);
      });
      fill(box, rows.length ? el('ol', { class: 'timeline' }, rows) : el('p', { class: 'muted small', text: 'Nothing else around this memory.' }));
    } catch (e) {
      fill(box, el('p', { class: 'muted small', text: `Timeline unavailable: ${e.message}` }));
    }
  }

  async function loadHistory(item, box) {
    try {
      const h = await api(`/api/observation/${item.id}/injections`);
      if (selectedKey !== item.key) return;
      const injected = h.injected || {};
      const fetched = h.fetched || {};
      const rows = [
        ...(injected.items || []).slice(0, 8).map((i) => el('li', {},
          el('span', { text: `injected (${i.kind.replace('_', ' ')}, ${i.shown})` }),
          el('span', { text: absTime(i.createdAt) }))),
        ...(fetched.items || []).slice(0, 8).map((f) => el('li', {},
          el('span', { text: `fetched by ${f.source}` }),
          el('span', { text: absTime(f.createdAt) }))),
      ];
      fill(box,
        el('div', { class: 'numbers' },
          el('div', { class: 'number' }, el('b', { text: fmt(injected.count || 0) }), el('span', { text: 'times injected' })),
          el('div', { class: 'number' }, el('b', { text: fmt(injected.sessions || 0) }), el('span', { text: 'sessions' })),
          el('div', { class: 'number' }, el('b', { text: fmt(fetched.count || 0) }), el('span', { text: 'times fetched' }))),
        injected.last ? el('p', { class: 'muted small', text: `Last injected ${absTime(injected.last)}.` }) : el('p', { class: 'muted small', text: 'Not injected into any session yet.' }),
        rows.length ? el('ul', { class: 'history' }, rows) : null);
    } catch (e) {
      fill(box, el('p', { class: 'muted small', text: `History unavailable: ${e.message}` }));
    }
  }

  async function deleteObservation(item) {
    const ok = await confirmDialog('Delete this memory?', `#${item.id} · ${item.title || '(untitled)'}`);
    if (!ok) { $('#delete-btn')?.focus(); return; }
    try {
      const result = await api(`/api/observation/${item.id}`, { method: 'DELETE' });
      removeItem(item.key);
      closeDetail();
      const held = result.corpora && result.corpora.length
        ? ` Still in corpus ${result.corpora.join(', ')} until rebuilt.` : '';
      toast(`Memory #${item.id} deleted.${held}`);
      refreshStats();
    } catch (e) {
      toast(`Not deleted: ${e.message}`, true);
    }
  }

  // ------------------------------------------------------------------------------------------
  // Live stream
  // ------------------------------------------------------------------------------------------
  const live = { source: null, lastId: null, connectedOnce: false, retryMs: 1000, pendingObs: new Set(), flushTimer: null };

  function setConn(state, text) {
    const node = $('#conn');
    node.className = `pill ${state === 'live' ? 'pill-live' : state === 'bad' ? 'pill-bad' : 'pill-wait'}`;
    node.textContent = text;
  }

  function setQueue(depth) {
    if (typeof depth !== 'number') return;
    const node = $('#queue-pill');
    node.textContent = depth ? `Queue ${fmt(depth)}` : 'Queue idle';
    node.classList.toggle('pill-accent', depth > 0);
  }

  function connect() {
    const url = live.lastId ? `/stream?${qs({ lastEventId: live.lastId })}` : '/stream';
    const source = new EventSource(url);
    live.source = source;
    source.addEventListener('connected', (ev) => {
      const hello = JSON.parse(ev.data);
      setConn('live', 'Live');
      live.retryMs = 1000;
      setQueue(hello.queueDepth);
      if (hello.compressor) $('#compressor-pill').textContent = hello.compressor;
      if (live.connectedOnce) resync();
      live.connectedOnce = true;
    });
    for (const kind of LIVE_EVENTS) {
      source.addEventListener(kind, (ev) => {
        if (ev.lastEventId) live.lastId = ev.lastEventId;
        let data = {};
        try { data = JSON.parse(ev.data); } catch (_) { /* keep {} */ }
        onLive(kind, data);
      });
    }
    source.onerror = () => {
      setConn('wait', 'Reconnecting…');
      if (source.readyState === EventSource.CLOSED) {
        // The browser gave up (e.g. an error status during a restart): retry ourselves.
        source.close();
        setTimeout(connect, live.retryMs);
        live.retryMs = Math.min(live.retryMs * 2, 15000);
      }
    };
  }

  function resync() {
    if (feed.mode === 'feed') refreshHead();
    refreshStats();
    if (currentView === 'status') refreshStatus();
  }

  const statsSoon = throttle(() => refreshStats(), 1500);
  const statusSoon = throttle(() => { if (currentView === 'status') refreshStatus(); }, 1000);

  function onLive(kind, data) {
    switch (kind) {
      case 'new_observation':
        live.pendingObs.add(data.id);
        clearTimeout(live.flushTimer);
        live.flushTimer = setTimeout(flushObservations, 40);
        statsSoon();
        break;
      case 'new_summary':
        liveFromList('summary', data);
        statsSoon();
        break;
      case 'new_prompt':
        liveFromList('prompt', data);
        statsSoon();
        break;
      case 'observation_deleted':
        removeItem(`observation:${data.id}`);
        if (selectedKey === `observation:${data.id}`) closeDetail();
        statsSoon();
        break;
      case 'processing_status':
        setQueue(data.queueDepth);
        statusSoon();
        break;
      case 'queued':
        statusSoon();
        break;
      case 'session_started':
      case 'session_completed':
        statsSoon();
        break;
      case 'settings_changed':
        if (currentView === 'settings' && !settingsDirty()) loadSettings();
        break;
      case 'lagged':
        refreshHead();
        break;
      default:
        break;
    }
  }

  function arrived(item) {
    if (feed.mode === 'search') {
      feed.newWhileSearching += 1;
      $('#new-banner-text').textContent = `${feed.newWhileSearching} new item${feed.newWhileSearching === 1 ? '' : 's'} arrived while you searched.`;
      $('#new-banner').hidden = false;
      return;
    }
    if (matches(item) && place(item, { live: true })) updateCount();
  }

  async function flushObservations() {
    const ids = Array.from(live.pendingObs);
    live.pendingObs.clear();
    if (!ids.length) return;
    try {
      const found = await api('/api/observations/batch', { method: 'POST', body: { ids, orderBy: 'date_asc' } });
      found.forEach((o) => arrived(fromObservation(o)));
    } catch (_) { /* deleted meanwhile, or the service is restarting: the resync catches up */ }
  }

  async function liveFromList(kind, data) {
    try {
      const page = await api(`${LIST_PATH[kind]}?${qs({ limit: 10, project: data.project, platform_source: feed.filters.platform })}`);
      const raw = page.items.find((r) => r.id === data.id);
      if (raw) arrived(FROM[kind](raw));
    } catch (_) { /* the resync after a reconnect catches up */ }
  }

  // ------------------------------------------------------------------------------------------
  // Stats, projects and the status view
  // ------------------------------------------------------------------------------------------
  async function refreshStats() {
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

  function addTypes(types) {
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

  async function loadProjects() {
    try {
      const data = await api('/api/projects');
      const select = $('#f-project');
      const current = select.value;
      const known = new Set($$('option', select).map((o) => o.value));
      for (const name of data.projects || []) {
        if (!known.has(name)) select.append(el('option', { value: name, text: name }));
      }
      select.value = current;
    } catch (_) { /* keep what we have */ }
  }

  function statCard(title, big, lines, extra) {
    return el('div', { class: 'panel stat-card' },
      el('h3', { text: title }),
      el('div', { class: 'stat-big', text: big }),
      el('ul', { class: 'stat-lines' }, lines.filter(Boolean).map(([k, v]) => el('li', {}, el('span', { text: k }), el('b', { text: v ?? '—' })))),
      extra || null);
  }

  async function refreshStatus() {
    try {
      const [health, stats, failed] = await Promise.all([api('/api/health'), api('/api/stats'), api('/api/queue/failed')]);
      const q = health.queue || {};
      const emb = health.embeddings || {};
      const spool = health.spool || {};
      const t = stats.totals || {};
      const worker = stats.worker || {};
      const uptime = health.uptimeSeconds || 0;
      fill($('#status-cards'),
        statCard('Compressor', health.compressor, [
          ['processed since start', fmt(worker.processed || 0)],
          ['last error', worker.lastError || 'none'],
        ]),
        statCard('Queue', `${fmt(health.queueDepth)} waiting`, [
          ['pending', fmt(q.pending)], ['in progress', fmt(q.claimed)], ['done', fmt(q.done)], ['failed', fmt(q.failed)],
        ]),
        statCard('Spool', `${fmt(spool.pending || 0)} pending`, [
          ['replayed', fmt(spool.processed || 0)], ['rejected', fmt(spool.rejected || 0)],
        ]),
        statCard('Embedding index', emb.state || 'unknown', [
          emb.embedder ? ['embedder', emb.embedder] : null,
          emb.indexed !== undefined ? ['indexed', fmt(emb.indexed)] : null,
          emb.pending !== undefined && emb.pending !== null ? ['waiting', fmt(emb.pending)] : null,
          emb.reindexing ? ['reindex', 'running'] : null,
        ], emb.reason ? el('p', { class: 'muted small', text: emb.reason }) : null),
        statCard('Store', `${fmt(t.observations || 0)} observations`, [
          ['sessions', fmt(t.sessions || 0)], ['summaries', fmt(t.summaries || 0)], ['prompts', fmt(t.prompts || 0)],
          ['events', fmt(t.events || 0)], ['size', `${((stats.dbSizeBytes || 0) / 1048576).toFixed(1)} MB`],
        ]),
        statCard('Service', `v${health.version}`, [
          ['schema', fmt(health.schemaVersion)], ['uptime', duration(uptime)],
          ['pid', String(health.pid)], ['data dir', health.dataDir],
        ], (health.warnings || []).length ? el('p', { class: 'field-error', text: health.warnings.join(' ') }) : null),
      );
      renderFailed(failed.items || []);
    } catch (e) {
      fill($('#status-cards'), el('div', { class: 'notice notice-error', text: e.message }));
    }
  }

  function renderFailed(items) {
    const box = clear($('#failed-list'));
    $('#retry-all').disabled = items.length === 0;
    if (!items.length) {
      box.append(el('p', { class: 'muted', text: 'No parked events. Everything the hooks sent has been compressed.' }));
      return;
    }
    box.append(el('table', {},
      el('thead', {}, el('tr', {}, ['Event', 'Kind', 'Project', 'Attempts', 'Reason', 'Failed', ''].map((h) => el('th', { scope: 'col', text: h })))),
      el('tbody', {}, items.map((f) => el('tr', {},
        el('td', { text: `#${f.eventId}` }), el('td', { text: f.kind }), el('td', { text: f.project || '—' }),
        el('td', { text: String(f.attempts) }), el('td', { class: 'reason', text: f.reason || '' }),
        el('td', { text: absTime(f.failedAt) }),
        el('td', {}, el('button', { class: 'btn btn-sm', type: 'button', text: 'Retry', 'aria-label': `Retry event ${f.eventId}`, onclick: () => retry([f.eventId]) })))))));
  }

  async function retry(eventIds) {
    try {
      const result = await api('/api/queue/retry', { method: 'POST', body: eventIds ? { eventIds } : {} });
      const msg = $('#retry-msg');
      msg.textContent = `Re-queued ${result.requeued} event${result.requeued === 1 ? '' : 's'}.`;
      msg.className = 'form-msg ok';
      refreshStatus();
    } catch (e) {
      const msg = $('#retry-msg');
      msg.textContent = e.message;
      msg.className = 'form-msg bad';
    }
  }

  // ------------------------------------------------------------------------------------------
  // Corpora
  // ------------------------------------------------------------------------------------------
  let askCorpus = null;

  function corpusFilter() {
    const f = feed.filters;
    const body = {};
    if (f.project) body.project = f.project;
    if (f.platform) body.platformSource = f.platform;
    if (obsTypeOf(f.type)) body.types = [obsTypeOf(f.type)];
    if (f.from) body.dateStart = f.from;
    if (f.to) body.dateEnd = f.to;
    return body;
  }

  function corpusFilterText() {
    const parts = Object.entries(corpusFilter()).map(([k, v]) => `${k}=${Array.isArray(v) ? v.join(',') : v}`);
    return parts.length ? parts.join('; ') : 'none (every observation)';
  }

  async function loadCorpora() {
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

  async function buildCorpus(ev) {
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

  async function ask(ev) {
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

  // ------------------------------------------------------------------------------------------
  // Settings (validated by the service; its refusals are shown next to the field)
  // ------------------------------------------------------------------------------------------
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
  const settingsDirty = () => settingsFields.length > 0 && Object.keys(changedSettings()).length > 0;

  async function loadSettings() {
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

  async function saveSettings(ev) {
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

  // ------------------------------------------------------------------------------------------
  // Views (tabs), keyboard
  // ------------------------------------------------------------------------------------------
  let currentView = 'feed';
  const VIEWS = ['feed', 'corpora', 'status', 'settings'];

  function showView(name, { focus = false } = {}) {
    if (!VIEWS.includes(name)) name = 'feed';
    currentView = name;
    for (const view of VIEWS) {
      const tab = $(`#tab-${view}`);
      const selected = view === name;
      tab.setAttribute('aria-selected', String(selected));
      tab.tabIndex = selected ? 0 : -1;
      $(`#view-${view}`).hidden = !selected;
    }
    if (focus) $(`#tab-${name}`).focus();
    if (location.hash !== `#${name}`) history.replaceState(null, '', name === 'feed' ? location.pathname : `#${name}`);
    if (name === 'corpora') { describeFilters(); loadCorpora(); }
    if (name === 'status') refreshStatus();
    if (name === 'settings') loadSettings();
  }

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

  function onKey(ev) {
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

  function onTabKey(ev) {
    const index = VIEWS.indexOf(currentView);
    let next = null;
    if (ev.key === 'ArrowRight') next = VIEWS[(index + 1) % VIEWS.length];
    if (ev.key === 'ArrowLeft') next = VIEWS[(index + VIEWS.length - 1) % VIEWS.length];
    if (ev.key === 'Home') next = VIEWS[0];
    if (ev.key === 'End') next = VIEWS[VIEWS.length - 1];
    if (next) { ev.preventDefault(); showView(next, { focus: true }); }
  }

  // ------------------------------------------------------------------------------------------
  // Start
  // ------------------------------------------------------------------------------------------
  function start() {
    addTypes([]);
    $$('.tabs [role="tab"]').forEach((tab) => {
      tab.addEventListener('click', () => showView(tab.dataset.view));
      tab.addEventListener('keydown', onTabKey);
    });
    $('#search-form').addEventListener('submit', (ev) => { ev.preventDefault(); startSearch($('#q').value); });
    $('#q').addEventListener('search', () => { if (!$('#q').value) resetFeed(); });
    $('#search-mode').addEventListener('change', () => { if (feed.mode === 'search') startSearch(feed.search.q); });
    $('#clear-search').addEventListener('click', () => { $('#q').value = ''; resetFeed(); });
    $('#new-banner-btn').addEventListener('click', () => { $('#q').value = ''; resetFeed(); });
    for (const id of ['#f-project', '#f-platform', '#f-type', '#f-from', '#f-to']) {
      $(id).addEventListener('change', () => (feed.mode === 'search' ? startSearch(feed.search.q) : resetFeed()));
    }
    $('#f-reset').addEventListener('click', () => {
      $('#f-project').value = '';
      $('#f-platform').value = '';
      $('#f-type').value = 'all';
      $('#f-from').value = '';
      $('#f-to').value = '';
      $('#q').value = '';
      resetFeed();
    });
    $('#f-corpus').addEventListener('click', () => { showView('corpora'); $('#c-name').focus(); });
    $('#corpus-form').addEventListener('submit', buildCorpus);
    $('#corpus-refresh').addEventListener('click', loadCorpora);
    $('#ask-form').addEventListener('submit', ask);
    $('#ask-q').addEventListener('keydown', (ev) => {
      if (ev.key === 'Enter' && (ev.ctrlKey || ev.metaKey)) ask(ev);
    });
    $('#status-refresh').addEventListener('click', refreshStatus);
    $('#retry-all').addEventListener('click', () => retry(null));
    $('#settings-form').addEventListener('submit', saveSettings);
    $('#settings-reload').addEventListener('click', () => { $('#settings-msg').textContent = ''; loadSettings(); });
    document.addEventListener('keydown', onKey);

    new IntersectionObserver((entries) => {
      if (entries.some((e) => e.isIntersecting)) loadMore();
    }, { rootMargin: '400px' }).observe($('#sentinel'));
    setInterval(() => $$('time[data-epoch]').forEach((t) => { t.textContent = relTime(Number(t.dataset.epoch)); }), 30000);

    showView(location.hash.slice(1) || 'feed');
    resetFeed();
    loadProjects();
    refreshStats();
    connect();
    setInterval(loadProjects, 60000);
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
})();
