// app.js: the inspector's entry point. It wires the live feed (events.js) into the list (list.js), the filters
// (filters.js) and the detail pane (detail.js), switches between the Requests and Cassette views, and holds
// the keyboard shortcuts: / filter, j/k or arrows move, Enter opens, Esc closes, p pauses.
//
// Hooks for the browser test (data-testid), kept stable:
//   tab-requests, tab-cassette              the two views' tabs
//   request-list                            the list (role=grid, focusable)
//   row (data-id = the entry's id)          one list row; only rows in view exist (the list is virtualized)
//   filter-text, filter-source, filter-status, filter-method, filter-host   the filters (selects take the
//                                           values of the wire: "miss", "4xx", "POST"; "" for all)
//   body-search, body-search-status         the search inside bodies and its progress
//   pause-toggle, clear-view, row-count, notes, connection-status ("live" once the feed is open), server-info
//   detail (data-id), detail-close          the detail pane
//   miss-nearest, miss-field (data-part), compare-differs   a miss: nearest recordings, each differing field,
//                                           and the side-by-side rows that differ
//   copy-curl, curl-command (a textarea holding the command once copy-curl is clicked)
//   save-cassette, save-result              save a live exchange, and what the server answered
//   cassette-row (data-interaction), cassette-detail, cassette-filter, session-picker,
//   pane-interactions, pane-routes, pane-store   the cassette view
//   token-dialog, token-input, token-save   the admin token prompt (--admin-token)

import { call, getJSON, requestToken, setToken, setTokenPrompt } from './api.js';
import { CassetteView } from './cassette-view.js';
import { DetailPane } from './detail.js';
import { EventFeed } from './events.js';
import { COMMON_METHODS, compileFilter, detailBodyMatches, emptyFilter, isActive, STATUS_CLASSES } from './filters.js';
import { hostOf, SOURCES } from './format.js';
import { MAX_ROWS, RequestList } from './list.js';

const $ = (id) => document.getElementById(id);

const filter = emptyFilter();
const seenHosts = new Set();
const seenMethods = new Set(COMMON_METHODS);
let droppedTotal = 0;
let restartNote = '';

const list = new RequestList($('request-list-region'), {
  onSelect: (entry) => {
    if (detail.isOpen && detail.current?.id !== entry.id) scheduleOpen(entry);
  },
  onOpen: (entry) => detail.open(entry),
  onChange: (counts) => showCounts(counts),
});

const detail = new DetailPane($('detail'), {
  onClose: () => list.focus(),
});

let openTimer = 0;
// Holding j down moves through many rows: the detail follows once the selection rests.
function scheduleOpen(entry) {
  clearTimeout(openTimer);
  openTimer = setTimeout(() => detail.open(entry), 120);
}

// Called each frame the list renders: the text is only touched when it changes.
function showCounts({ shown, held, trimmed, waiting }) {
  const parts = [isActive(filter) ? `${shown.toLocaleString('en-US')} of ${held.toLocaleString('en-US')} requests` : `${held.toLocaleString('en-US')} requests`];
  if (waiting > 0) parts.push(`${waiting.toLocaleString('en-US')} new while paused`);
  if (trimmed > 0) parts.push(`the oldest ${trimmed.toLocaleString('en-US')} left the list (it keeps ${MAX_ROWS.toLocaleString('en-US')})`);
  const text = parts.join(' · ');
  if ($('counts').textContent !== text) $('counts').textContent = text;
}

function showNotes() {
  const notes = [];
  if (droppedTotal > 0) notes.push(`Kakapo skipped ${droppedTotal.toLocaleString('en-US')} events this page was too slow to read (GET /__kakapo/requests lists what it holds)`);
  if (restartNote) notes.push(restartNote);
  $('notes').textContent = notes.join(' · ');
}

// Filters ---------------------------------------------------------------------------------------------------

function fillSelect(select, allLabel, values, titles = {}) {
  const current = select.value;
  select.textContent = '';
  select.append(new Option(allLabel, ''));
  for (const value of values) {
    const option = new Option(value, value);
    if (titles[value]) option.title = titles[value];
    select.append(option);
  }
  select.value = [...select.options].some((option) => option.value === current) ? current : '';
}

fillSelect($('filter-source'), 'All sources', Object.keys(SOURCES), SOURCES);
fillSelect($('filter-status'), 'All statuses', STATUS_CLASSES);
fillSelect($('filter-method'), 'All methods', [...seenMethods]);

function applyFilter() {
  filter.text = $('filter-text').value;
  filter.source = $('filter-source').value;
  filter.status = $('filter-status').value;
  filter.method = $('filter-method').value;
  filter.host = $('filter-host').value;
  list.setFilter(compileFilter(filter));
}

for (const id of ['filter-text', 'filter-host']) $(id).addEventListener('input', applyFilter);
for (const id of ['filter-source', 'filter-status', 'filter-method']) $(id).addEventListener('change', applyFilter);

function noteValues(entries) {
  let hostsChanged = false;
  let methodsChanged = false;
  for (const entry of entries) {
    const host = hostOf(entry);
    if (host && !seenHosts.has(host) && seenHosts.size < 500) {
      seenHosts.add(host);
      hostsChanged = true;
    }
    const method = typeof entry.method === 'string' ? entry.method.toUpperCase() : '';
    if (method && /^[A-Z-]{1,20}$/.test(method) && !seenMethods.has(method) && seenMethods.size < 40) {
      seenMethods.add(method);
      methodsChanged = true;
    }
  }
  if (hostsChanged) {
    const datalist = $('hosts');
    datalist.textContent = '';
    for (const host of [...seenHosts].sort()) datalist.append(new Option(host));
  }
  if (methodsChanged) fillSelect($('filter-method'), 'All methods', [...seenMethods]);
}

// Search inside bodies: asks GET /__kakapo/requests/{id} for the entries held, newest first, four at a time,
// and shows those whose request or response body holds the text. Kakapo keeps the detail of its latest 1000
// requests, so older ones are counted as not held; requests arriving during a search are checked too.
const bodySearch = {
  query: '',
  generation: 0,
  queue: [],
  running: 0,
  checked: 0,
  notHeld: 0,
  matches: new Set(),
  refreshTimer: 0,
};

const BODY_SEARCH_LIMIT = 2000;
let bodySearchTimer = 0;

$('body-search').addEventListener('input', () => {
  clearTimeout(bodySearchTimer);
  bodySearchTimer = setTimeout(startBodySearch, 350);
});
$('body-search').addEventListener('keydown', (event) => {
  if (event.key === 'Enter') {
    clearTimeout(bodySearchTimer);
    startBodySearch();
  }
});

function startBodySearch() {
  const query = $('body-search').value.trim();
  if (query === bodySearch.query) return;
  bodySearch.generation += 1;
  bodySearch.query = query;
  bodySearch.queue = [];
  bodySearch.checked = 0;
  bodySearch.notHeld = 0;
  bodySearch.matches = new Set();
  if (query === '') {
    filter.bodyMatches = null;
    $('search-status').textContent = '';
    list.setFilter(compileFilter(filter));
    return;
  }
  filter.bodyMatches = bodySearch.matches;
  list.setFilter(compileFilter(filter));
  const entries = list.all();
  bodySearch.queue = entries.slice(Math.max(0, entries.length - BODY_SEARCH_LIMIT)).reverse();
  pumpBodySearch();
}

function pumpBodySearch() {
  const generation = bodySearch.generation;
  while (bodySearch.running < 4 && bodySearch.queue.length > 0) {
    const entry = bodySearch.queue.shift();
    bodySearch.running += 1;
    checkBody(entry, generation).finally(() => {
      if (generation !== bodySearch.generation) return;
      bodySearch.running -= 1;
      pumpBodySearch();
    });
  }
  showBodySearch();
}

async function checkBody(entry, generation) {
  let matched = false;
  try {
    const { status, body } = await call(`/__kakapo/requests/${encodeURIComponent(entry.id)}`);
    if (generation !== bodySearch.generation) return;
    if (status === 200) matched = detailBodyMatches(body, bodySearch.query);
    else bodySearch.notHeld += 1;
  } catch {
    if (generation !== bodySearch.generation) return;
    bodySearch.notHeld += 1;
  }
  bodySearch.checked += 1;
  if (matched) {
    bodySearch.matches.add(entry.id);
    // Matches found one by one re-filter the list at most every 200 ms.
    if (!bodySearch.refreshTimer) {
      bodySearch.refreshTimer = setTimeout(() => {
        bodySearch.refreshTimer = 0;
        list.setFilter(compileFilter(filter));
      }, 200);
    }
  }
}

function showBodySearch() {
  if (!bodySearch.query) return;
  const pending = bodySearch.queue.length + bodySearch.running;
  const parts = [`bodies: ${bodySearch.matches.size} ${bodySearch.matches.size === 1 ? 'match' : 'matches'}`];
  parts.push(pending > 0 ? `searching (${bodySearch.checked} checked, ${pending} to go)` : `${bodySearch.checked} checked`);
  if (bodySearch.notHeld > 0) parts.push(`${bodySearch.notHeld} no longer held`);
  $('search-status').textContent = parts.join(', ');
  $('search-status').dataset.done = String(pending === 0);
}

// The live feed ----------------------------------------------------------------------------------------------

const feed = new EventFeed({
  onEntries: (entries) => {
    noteValues(entries);
    list.add(entries);
    if (bodySearch.query) {
      for (const entry of entries) bodySearch.queue.push(entry);
      pumpBodySearch();
    }
  },
  onDropped: ({ dropped }) => {
    droppedTotal += dropped;
    showNotes();
  },
  onRestart: () => {
    list.clear();
    restartNote = `Kakapo restarted at ${new Date().toLocaleTimeString()}: the list starts again`;
    showNotes();
    loadHealth();
  },
  onState: (state, delay) => {
    const labels = {
      connecting: 'connecting…', live: 'live', retrying: `disconnected, retrying in ${Math.round((delay ?? 0) / 1000)} s`,
      unauthorized: 'needs the admin token (click to give it)', unavailable: 'this Kakapo has no live feed',
    };
    const element = $('connection');
    element.textContent = labels[state] ?? state;
    element.dataset.state = state;
    if (state === 'unavailable') startPolling();
  },
});

// After the token dialog was cancelled, the connection label is where one asks for it again.
$('connection').addEventListener('click', async () => {
  if ($('connection').dataset.state !== 'unauthorized') return;
  if (!(await requestToken('This Kakapo asks for its admin token (--admin-token).', { force: true }))) return;
  loadHealth();
  feed.start();
});

// A Kakapo without /__kakapo/events still lists its journal: poll it every two seconds.
let polling = 0;
function startPolling() {
  if (polling) return;
  let last = -1;
  const poll = async () => {
    try {
      const body = await getJSON('/__kakapo/requests');
      const fresh = (Array.isArray(body?.requests) ? body.requests : []).filter((entry) => Number.isSafeInteger(entry?.id) && entry.id > last && entry.source !== 'admin');
      if (fresh.length > 0) {
        last = fresh[fresh.length - 1].id;
        noteValues(fresh);
        list.add(fresh);
      }
    } catch {
      // Shown by the next successful poll; the connection label already says what is missing.
    }
  };
  polling = setInterval(poll, 2000);
  poll();
}

// Pause, clear -----------------------------------------------------------------------------------------------

function togglePause() {
  const button = $('pause');
  const paused = button.getAttribute('aria-pressed') !== 'true';
  button.setAttribute('aria-pressed', String(paused));
  button.textContent = paused ? 'Follow' : 'Pause';
  list.setPaused(paused);
}

$('pause').addEventListener('click', togglePause);
$('clear').addEventListener('click', () => {
  list.clear();
  detail.close();
  droppedTotal = 0;
  restartNote = '';
  showNotes();
});

// Views ------------------------------------------------------------------------------------------------------

let cassetteView = null;

function showView(name) {
  const cassette = name === 'cassette';
  $('view-requests').hidden = cassette;
  $('view-cassette').hidden = !cassette;
  $('tab-requests').setAttribute('aria-selected', String(!cassette));
  $('tab-cassette').setAttribute('aria-selected', String(cassette));
  if (cassette) {
    cassetteView ??= new CassetteView($('view-cassette'));
    cassetteView.show(cassetteView.pane);
  }
  const hash = cassette ? '#/cassette' : '#/requests';
  if (location.hash !== hash) history.replaceState(null, '', hash);
}

$('tab-requests').addEventListener('click', () => showView('requests'));
$('tab-cassette').addEventListener('click', () => showView('cassette'));
document.querySelector('.tabs').addEventListener('keydown', (event) => {
  // Arrow keys move between tabs, as the ARIA tabs pattern has it.
  if (event.key !== 'ArrowLeft' && event.key !== 'ArrowRight') return;
  const next = $('tab-requests').getAttribute('aria-selected') === 'true' ? 'cassette' : 'requests';
  showView(next);
  $(`tab-${next}`).focus();
});
window.addEventListener('hashchange', () => showView(location.hash.startsWith('#/cassette') ? 'cassette' : 'requests'));

// Keyboard ---------------------------------------------------------------------------------------------------

function typing(target) {
  return target instanceof HTMLElement && (target.isContentEditable || ['INPUT', 'SELECT', 'TEXTAREA'].includes(target.tagName));
}

document.addEventListener('keydown', (event) => {
  if (event.defaultPrevented || event.altKey || event.ctrlKey || event.metaKey) return;
  if ($('token-dialog').open) return;
  if (event.key === 'Escape') {
    if (typing(event.target) && event.target.closest('.filters')) {
      event.target.blur();
      list.focus();
    } else if (!$('view-cassette').hidden && cassetteView?.closeDetail()) {
      // The cassette view's interaction detail closed.
    } else if (!$('view-requests').hidden && detail.isOpen) {
      detail.close();
    } else {
      return;
    }
    event.preventDefault();
    return;
  }
  if (typing(event.target)) return;
  const requestsShown = !$('view-requests').hidden;
  if (event.key === '/' && requestsShown) {
    event.preventDefault();
    $('filter-text').focus();
    $('filter-text').select();
  } else if (event.key === 'p' && requestsShown) {
    togglePause();
  } else if (requestsShown && ['j', 'k', 'ArrowDown', 'ArrowUp'].includes(event.key) && !event.target.closest?.('.grid, .detail')) {
    // j/k work wherever the focus rests outside the list and the detail (whose own text may scroll).
    event.preventDefault();
    list.focus();
    list.move(event.key === 'j' || event.key === 'ArrowDown' ? 1 : -1);
  }
});

// The skip link moves the focus to the list (its href would change the view's #route).
document.querySelector('.skip').addEventListener('click', (event) => {
  event.preventDefault();
  showView('requests');
  list.focus();
});

// The token dialog ---------------------------------------------------------------------------------------------

setTokenPrompt((reason) => new Promise((resolve) => {
  const dialog = $('token-dialog');
  $('token-reason').textContent = reason ?? '';
  $('token-input').value = '';
  const finish = (value) => {
    $('token-form').removeEventListener('submit', submit);
    $('token-cancel').removeEventListener('click', cancel);
    dialog.removeEventListener('cancel', cancel);
    if (dialog.open) dialog.close();
    resolve(value);
  };
  const submit = (event) => {
    event.preventDefault();
    const value = $('token-input').value.trim();
    if (value) finish(value);
  };
  const cancel = (event) => {
    event?.preventDefault();
    finish(null);
  };
  $('token-form').addEventListener('submit', submit);
  $('token-cancel').addEventListener('click', cancel);
  dialog.addEventListener('cancel', cancel);
  dialog.showModal();
  $('token-input').focus();
}));

// A token in the address (#token=...) is taken once and removed, so a script can open the page already signed in.
{
  const match = /(?:^#|&)token=([^&]+)/.exec(location.hash);
  if (match) {
    try {
      setToken(decodeURIComponent(match[1]));
    } catch {
      // A malformed escape: ignored, the dialog asks instead.
    }
    history.replaceState(null, '', location.pathname + location.search);
  }
}

// Start ------------------------------------------------------------------------------------------------------

async function loadHealth() {
  try {
    const health = await getJSON('/__kakapo/health');
    // The page is on the admin listener; the app's requests (and copied curl commands) go to the proxy port.
    const proxy = health.listeners?.proxy;
    if (Number.isSafeInteger(proxy) && proxy > 0 && proxy < 65536) {
      document.documentElement.dataset.proxyOrigin = `${location.protocol}//${location.hostname}:${proxy}`;
    }
    const parts = [`mode ${health.mode ?? '?'}`];
    if (health.cassette) parts.push(String(health.cassette));
    if (health.sessions) {
      const open = Number.isSafeInteger(health.sessions.open) ? health.sessions.open : 0;
      parts.push(`${open} ${open === 1 ? 'session' : 'sessions'} open`);
    }
    if (health.version) parts.push(`v${health.version}`);
    $('server-info').textContent = parts.join(' · ');
    $('server-info').title = parts.join('\n');
  } catch (error) {
    $('server-info').textContent = error.message;
  }
}

showView(location.hash.startsWith('#/cassette') ? 'cassette' : 'requests');
loadHealth().then(() => feed.start());
