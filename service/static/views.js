/* Views (tabs): which one shows, its place in the URL hash, and arrow-key moves between tabs.
 *
 * Each view registers what to load when it is shown (`whenShown`, called by app.js) instead of
 * this module importing every view: the views import `showView` to navigate, so importing them
 * back would make a cycle.
 */

import { $ } from './dom.js';

export let currentView = 'feed';
const VIEWS = ['feed', 'corpora', 'status', 'settings'];
const onShow = new Map(); // view name -> what to load when it is shown

/** Register what `showView(name)` loads (the Corpora, Status and Settings views do, at start). */
export function whenShown(name, load) {
  onShow.set(name, load);
}

export function showView(name, { focus = false } = {}) {
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
  onShow.get(name)?.();
}

export function onTabKey(ev) {
  const index = VIEWS.indexOf(currentView);
  let next = null;
  if (ev.key === 'ArrowRight') next = VIEWS[(index + 1) % VIEWS.length];
  if (ev.key === 'ArrowLeft') next = VIEWS[(index + VIEWS.length - 1) % VIEWS.length];
  if (ev.key === 'Home') next = VIEWS[0];
  if (ev.key === 'End') next = VIEWS[VIEWS.length - 1];
  if (next) { ev.preventDefault(); showView(next, { focus: true }); }
}
