// cassette-view.js: what Kakapo replays from. The cassette's interactions (GET /__kakapo/cassette, per session
// when sessions are open) with which were used in this run and which are older than --max-age, each one's
// detail (GET /__kakapo/cassette/{n}); the routes (file and runtime, GET /__kakapo/routes) and the Store's
// collections (GET /__kakapo/store), read only.

import { call, errorMessage, getJSON } from './api.js';
import { renderRequest, renderResponse, renderWebSocket } from './detail.js';
import { formatAge, formatBytes, formatTimestamp, truncate } from './format.js';
import { renderJSON } from './json-view.js';

const PAGE = 1000;

function element(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

/** The pure part of the interactions filter: words that must all occur in "METHOD url status kind". */
export function interactionMatches(interaction, text, { unusedOnly = false, staleOnly = false } = {}) {
  if (unusedOnly && interaction.used) return false;
  if (staleOnly && !interaction.stale) return false;
  const words = String(text ?? '').toLowerCase().split(/\s+/).filter(Boolean);
  if (words.length === 0) return true;
  const haystack = `#${interaction.interaction} ${interaction.method} ${interaction.url} ${interaction.status} ${interaction.kind}`.toLowerCase();
  return words.every((word) => haystack.includes(word));
}

/** The Cassette tab: interactions, routes and Store panes. */
export class CassetteView {
  constructor(root) {
    this.root = root;
    this.session = '';
    this.data = null;
    this.pane = 'interactions';
    this.release = [];
    this.build();
  }

  build() {
    const bar = element('div', 'toolbar');
    const tabs = element('div', 'subtabs');
    tabs.setAttribute('role', 'tablist');
    tabs.setAttribute('aria-label', 'Cassette, routes and Store');
    this.tabButtons = {};
    for (const [key, label] of [['interactions', 'Interactions'], ['routes', 'Routes'], ['store', 'Store']]) {
      const button = element('button', 'subtab', label);
      button.type = 'button';
      button.setAttribute('role', 'tab');
      button.dataset.testid = `pane-${key}`;
      button.addEventListener('click', () => this.show(key));
      this.tabButtons[key] = button;
      tabs.append(button);
    }
    this.sessionLabel = element('label', 'session-picker');
    this.sessionSelect = element('select');
    this.sessionSelect.dataset.testid = 'session-picker';
    this.sessionSelect.addEventListener('change', () => {
      this.session = this.sessionSelect.value;
      this.refresh();
    });
    this.sessionLabel.append('Session ', this.sessionSelect);
    this.sessionLabel.hidden = true;
    const refresh = element('button', '', 'Refresh');
    refresh.type = 'button';
    refresh.title = 'Load again (used marks change as requests replay)';
    refresh.addEventListener('click', () => this.refresh());
    bar.append(tabs, this.sessionLabel, refresh);
    this.body = element('div', 'cassette-body');
    this.root.append(bar, this.body);
  }

  /** Shows `pane` ('interactions', 'routes' or 'store') and loads it. */
  show(pane) {
    this.pane = pane;
    for (const [key, button] of Object.entries(this.tabButtons)) {
      button.setAttribute('aria-selected', String(key === pane));
      button.classList.toggle('active', key === pane);
    }
    this.refresh();
  }

  async refresh() {
    for (const url of this.release) URL.revokeObjectURL(url);
    this.release = [];
    this.body.textContent = 'Loading…';
    try {
      if (this.pane === 'routes') await this.loadRoutes();
      else if (this.pane === 'store') await this.loadStore();
      else await this.loadInteractions();
    } catch (error) {
      this.body.textContent = '';
      this.body.append(element('div', 'notice', error.message));
    }
  }

  // Fills the session picker; returns whether there is a cassette to show (the server's or a session's).
  async loadSessions() {
    let sessions = [];
    let serverCassette = true;
    try {
      // Only a Kakapo with sessions (--cassette-dir) has the endpoint; asking another would log a 404.
      const health = await getJSON('/__kakapo/health');
      serverCassette = Boolean(health?.cassette);
      if (health?.sessions) {
        const { status, body } = await call('/__kakapo/sessions');
        if (status === 200 && Array.isArray(body?.sessions)) sessions = body.sessions;
      }
    } catch {
      // Shown as no sessions: the server's cassette alone.
    }
    const select = this.sessionSelect;
    select.textContent = '';
    if (serverCassette) select.append(new Option('the server\u2019s cassette', ''));
    for (const session of sessions) {
      const id = String(session?.id ?? '');
      if (id) select.append(new Option(`${id} (${truncate(String(session.cassette ?? ''), 80)})`, id));
    }
    const values = [...select.options].map((option) => option.value);
    if (!values.includes(this.session)) this.session = values[0] ?? '';
    select.value = this.session;
    this.sessionLabel.hidden = sessions.length === 0;
    return values.length > 0;
  }

  async loadInteractions() {
    if (!(await this.loadSessions())) {
      this.body.textContent = '';
      this.body.append(element('div', 'notice', 'No cassette is loaded. Start Kakapo with --cassette FILE (or open a session with --cassette-dir) to see one here.'));
      return;
    }
    const query = this.session ? `?session=${encodeURIComponent(this.session)}` : '';
    const { status, body } = await call(`/__kakapo/cassette${query}`);
    this.body.textContent = '';
    if (status === 404) {
      this.body.append(element('div', 'notice', `${errorMessage(status, body)}. Start Kakapo with --cassette FILE (or open a session) to see one here.`));
      return;
    }
    if (status !== 200 || !body) throw new Error(errorMessage(status, body));
    this.data = body;
    const interactions = Array.isArray(body.interactions) ? body.interactions : [];
    const used = interactions.filter((item) => item.used).length;
    const stale = interactions.filter((item) => item.stale).length;
    const head = element('div', 'cassette-head');
    head.append(
      element('strong', 'mono', truncate(String(body.cassette ?? ''), 400)),
      element('span', 'muted', ` · mode ${body.mode ?? '?'} · ${interactions.length} interactions · ${used} used in this run${body.maxAge ? ` · ${stale} older than --max-age ${body.maxAge}` : ''}`),
    );
    const filters = element('div', 'toolbar');
    const text = element('input');
    text.type = 'search';
    text.placeholder = 'Filter interactions';
    text.setAttribute('aria-label', 'Filter interactions');
    text.dataset.testid = 'cassette-filter';
    const unused = checkbox('unused only');
    const staleOnly = checkbox('stale only');
    filters.append(text, unused.label, staleOnly.label);

    const split = element('div', 'split');
    const table = element('table', 'interactions');
    table.setAttribute('aria-label', 'Interactions');
    const headRow = table.createTHead().insertRow();
    for (const title of ['#', 'Method', 'URL', 'Status', 'Kind', 'Size', 'Recorded', '']) headRow.append(element('th', '', title));
    const tbody = table.createTBody();
    const detail = element('div', 'cassette-detail');
    detail.dataset.testid = 'cassette-detail';
    detail.hidden = true;
    const list = element('div', 'interaction-list');
    list.append(table);
    split.append(list, detail);

    let limit = PAGE;
    const more = element('button', 'small');
    more.type = 'button';
    const fill = () => {
      tbody.textContent = '';
      const options = { unusedOnly: unused.input.checked, staleOnly: staleOnly.input.checked };
      const shown = interactions.filter((item) => interactionMatches(item, text.value, options));
      for (const item of shown.slice(0, limit)) tbody.append(this.interactionRow(item, detail));
      more.hidden = shown.length <= limit;
      more.textContent = `show more (${shown.length - limit} left)`;
    };
    more.addEventListener('click', () => {
      limit += PAGE;
      fill();
    });
    for (const input of [text, unused.input, staleOnly.input]) input.addEventListener('input', fill);
    list.append(more);
    fill();
    this.body.append(head, filters, split);
  }

  interactionRow(item, detail) {
    const row = element('tr', 'cassette-row');
    row.dataset.testid = 'cassette-row';
    row.dataset.interaction = String(item.interaction);
    row.tabIndex = 0;
    const badges = element('td', 'badges');
    badges.append(element('span', item.used ? 'badge used' : 'badge unused', item.used ? 'used' : 'unused'));
    if (item.stale) badges.append(' ', element('span', 'badge stale', 'stale'));
    const status = Number.isFinite(item.status) ? item.status : 0;
    row.append(
      element('td', 'num', String(item.interaction)), element('td', 'method', truncate(String(item.method ?? ''), 16)),
      element('td', 'mono url', truncate(String(item.url ?? ''), 600)),
      element('td', `status s-${Math.floor(status / 100)}xx`, status ? String(status) : '—'),
      element('td', '', String(item.kind ?? 'http')), element('td', 'num', formatBytes(item.responseBytes)),
      element('td', '', formatAge(item.recordedAt)), badges,
    );
    row.cells[6].title = formatTimestamp(item.recordedAt);
    const open = () => {
      for (const other of row.parentElement?.querySelectorAll('.selected') ?? []) other.classList.remove('selected');
      row.classList.add('selected');
      this.openInteraction(item.interaction, detail);
    };
    row.addEventListener('click', open);
    row.addEventListener('keydown', (event) => {
      if (event.key === 'Enter' || event.key === ' ') {
        event.preventDefault();
        open();
      } else if (event.key === 'ArrowDown' || event.key === 'j') {
        event.preventDefault();
        row.nextElementSibling?.focus();
      } else if (event.key === 'ArrowUp' || event.key === 'k') {
        event.preventDefault();
        row.previousElementSibling?.focus();
      }
    });
    return row;
  }

  /** Closes an interaction's detail; false when none was open (Esc then has nothing to do here). */
  closeDetail() {
    const detail = this.body.querySelector('.cassette-detail');
    if (!detail || detail.hidden) return false;
    detail.hidden = true;
    detail.textContent = '';
    const selected = this.body.querySelector('tr.cassette-row.selected');
    selected?.classList.remove('selected');
    selected?.focus();
    return true;
  }

  async openInteraction(number, detail) {
    for (const url of this.release) URL.revokeObjectURL(url);
    this.release = [];
    detail.hidden = false;
    detail.textContent = 'Loading…';
    const query = this.session ? `?session=${encodeURIComponent(this.session)}` : '';
    let data;
    try {
      data = await getJSON(`/__kakapo/cassette/${encodeURIComponent(number)}${query}`);
    } catch (error) {
      detail.textContent = '';
      detail.append(element('div', 'notice', error.message));
      return;
    }
    detail.textContent = '';
    const head = element('header', 'detail-head');
    head.append(element('h2', '', `Interaction ${number}`));
    const close = element('button', 'icon', '\u00d7');
    close.type = 'button';
    close.setAttribute('aria-label', 'Close the interaction');
    close.addEventListener('click', () => this.closeDetail());
    head.append(close);
    const facts = element('p', 'muted');
    facts.textContent = `recorded ${formatTimestamp(data.recordedAt)} (${formatAge(data.recordedAt)}) · ${data.used ? 'used in this run' : 'not used in this run'}${data.stale ? ' · older than --max-age' : ''}`;
    detail.append(head, facts);
    if (data.request) detail.append(renderRequest(data.request, this.release));
    if (data.response) detail.append(renderResponse(data.response, this.release));
    if (data.webSocket) detail.append(renderWebSocket(data.webSocket));
  }

  async loadRoutes() {
    const body = await getJSON('/__kakapo/routes');
    this.body.textContent = '';
    const routes = Array.isArray(body?.routes) ? body.routes : [];
    const resources = Array.isArray(body?.resources) ? body.resources : [];
    this.body.append(element('p', 'muted', `${routes.length} ${routes.length === 1 ? 'route' : 'routes'}, ${resources.length} Store ${resources.length === 1 ? 'collection' : 'collections'} served as resources. Read only: change routes in their file or through POST/DELETE /__kakapo/routes.`));
    if (routes.length === 0) this.body.append(element('div', 'note', 'No routes (start Kakapo with --routes FILE, or add some with POST /__kakapo/routes).'));
    for (const route of routes) {
      const box = element('details', 'route');
      const summary = element('summary');
      const definition = route?.route ?? {};
      summary.append(
        element('span', `badge origin-${route?.origin === 'runtime' ? 'runtime' : 'file'}`, String(route?.origin ?? '')), ' ',
        element('span', 'method', truncate(String(definition.method ?? '*'), 16)), ' ',
        element('span', 'mono', truncate(String(definition.path ?? definition.match?.path ?? ''), 400)), ' ',
        element('span', 'muted', truncate(String(route?.id ?? ''), 200)),
      );
      box.append(summary, renderJSON(definition, { open: 1 }));
      this.body.append(box);
    }
    if (resources.length > 0) {
      this.body.append(element('h3', '', 'Store resources'), renderJSON(resources, { open: 2 }));
    }
  }

  async loadStore() {
    const body = await getJSON('/__kakapo/store');
    this.body.textContent = '';
    const stores = Array.isArray(body?.stores) ? body.stores : [];
    if (stores.length === 0) {
      this.body.append(element('div', 'note', 'No Store is attached (a routes file with collections, or a Swift program, attaches one).'));
      return;
    }
    this.body.append(element('p', 'muted', 'The Store\u2019s collections as they stand. Read only; DELETE /__kakapo/store resets them.'));
    for (const store of stores) this.body.append(renderJSON(store, { open: 2 }));
  }
}

function checkbox(text) {
  const label = element('label', 'toggle');
  const input = element('input');
  input.type = 'checkbox';
  label.append(input, ` ${text}`);
  return { label, input };
}
