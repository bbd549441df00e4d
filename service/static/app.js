/* workbench viewer: plain JavaScript, no build step, no dependencies, no network but this origin.
 *
 * This is the page's entry (`<script type="module" src="/static/app.js">`): it wires the page's
 * controls to the modules below and starts the feed, the totals and the live stream. The modules,
 * one job each, imported without a cycle (tests/test_viewer_modules.py checks it):
 *
 *   dom.js         el()/fill(): the only way anything reaches the page (text, never markup)
 *   api.js         fetch the service's JSON API; ApiError; the list routes and search groups
 *   format.js      times, durations, counts and first lines as text
 *   dialogs.js     the toast line and the confirm dialog
 *   records.js     API records -> feed items, and one record's content rendered
 *   feed-state.js  what the feed shows and how its lists are paged; its count line
 *   filters.js     the feed filters: read, matched, described, and as a corpus filter
 *   cards.js       one item as an expandable card, placed in date order
 *   feed.js        the three lists merged by date, loaded as you scroll, refreshed on reconnect
 *   search.js      the hybrid search in the feed's place
 *   detail.js      the detail panel: full record, timeline, injection history, delete
 *   totals.js      store counts, queue and compressor pills, the filters' choices
 *   status.js      the Status view and retrying parked events
 *   corpus.js      the Corpora view and the knowledge agent's answers
 *   settings.js    the Settings view
 *   views.js       the tabs, and what each view loads when shown
 *   keys.js        keyboard shortcuts
 *   stream.js      the live EventSource on /stream
 *
 * Safety rule: stored memories are untrusted text (a tool output can contain anything). Every
 * value that comes from the API reaches the page through `el()` (dom.js), which only ever sets
 * textContent and attributes, never parsed as HTML; the page's Content-Security-Policy forbids
 * inline script on top of that. Class names derived from data are whitelisted.
 */

import { ask, buildCorpus, loadCorpora } from './corpus.js';
import { $, $$ } from './dom.js';
import { feed } from './feed-state.js';
import { resetFeed } from './feed.js';
import { describeFilters } from './filters.js';
import { relTime } from './format.js';
import { onKey } from './keys.js';
import { loadNextPage, startSearch } from './search.js';
import { loadSettings, saveSettings } from './settings.js';
import { refreshStatus, retry } from './status.js';
import { connect } from './stream.js';
import { addTypes, loadProjects, refreshStats } from './totals.js';
import { onTabKey, showView, whenShown } from './views.js';

function start() {
  whenShown('corpora', () => { describeFilters(); loadCorpora(); });
  whenShown('status', refreshStatus);
  whenShown('settings', loadSettings);
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
    if (entries.some((e) => e.isIntersecting)) loadNextPage();
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
