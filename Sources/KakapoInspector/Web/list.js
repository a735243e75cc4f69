// list.js: the live list of requests, newest first. It holds up to MAX_ROWS entries (older ones leave, with a
// note), renders only the rows in view (a pool of row elements moved with CSS transforms), and takes new entries
// in batches at most ARRIVAL_INTERVAL apart (scrolling, filtering and the keyboard still render every frame).
// Keyboard: j/k or the arrows move, Home/End, PageUp/PageDown, Enter opens (wired by app.js on the grid).

import { formatBytes, formatClock, formatDuration, hostOf, pathOf, SOURCES, statusClass, truncate } from './format.js';

/** The most entries the page keeps; the oldest leave first. */
export const MAX_ROWS = 10_000;

/**
 * How long new entries wait to be drawn, at most: rendering them every animation frame while thousands of
 * requests a second arrive cost the browser 38% of a core and Kakapo a quarter of its throughput on 2 cores;
 * five renders a second cost it 10% (tools/bench-inspector).
 */
export const ARRIVAL_INTERVAL = 200;

/** A row's height in pixels; inspector.css's .row height must agree. */
export const ROW_HEIGHT = 24;

const OVERSCAN = 8;

const COLUMNS = [
  ['time', 'Time'], ['method', 'Method'], ['status', 'Status'], ['source', 'Source'], ['host', 'Host'],
  ['path', 'Path'], ['ms', 'Duration'], ['size', 'Size'],
];

/** The live list. `onSelect(entry)` follows the selection; `onOpen(entry)` is Enter or a click. */
export class RequestList {
  constructor(root, { onSelect, onOpen, onChange }) {
    this.onSelect = onSelect;
    this.onOpen = onOpen;
    this.onChange = onChange;
    this.entries = [];
    this.view = [];
    this.pending = [];
    this.held = [];
    this.paused = false;
    this.predicate = () => true;
    this.selectedId = null;
    this.trimmed = 0;
    this.frame = 0;
    this.arrivals = 0;
    this.pool = [];
    this.build(root);
  }

  build(root) {
    this.grid = document.createElement('div');
    this.grid.className = 'grid';
    this.grid.setAttribute('role', 'grid');
    this.grid.setAttribute('aria-label', 'Requests, newest first');
    this.grid.setAttribute('aria-readonly', 'true');
    this.grid.tabIndex = 0;
    this.grid.dataset.testid = 'request-list';
    const header = document.createElement('div');
    header.className = 'row header';
    header.setAttribute('role', 'row');
    header.setAttribute('aria-rowindex', '1');
    for (const [key, title] of COLUMNS) {
      const cell = document.createElement('span');
      cell.className = `cell c-${key}`;
      cell.setAttribute('role', 'columnheader');
      cell.textContent = title;
      header.append(cell);
    }
    this.viewport = document.createElement('div');
    this.viewport.className = 'viewport';
    this.viewport.setAttribute('role', 'rowgroup');
    this.spacer = document.createElement('div');
    this.spacer.className = 'spacer';
    this.viewport.append(this.spacer);
    this.empty = document.createElement('div');
    this.empty.className = 'empty';
    this.grid.append(header, this.viewport, this.empty);
    root.append(this.grid);

    this.viewport.addEventListener('scroll', () => this.schedule());
    new ResizeObserver(() => this.schedule()).observe(this.viewport);
    this.viewport.addEventListener('click', (event) => {
      const row = event.target.closest('.row');
      if (!row || row.dataset.id === undefined) return;
      const entry = this.byId(Number(row.dataset.id));
      if (!entry) return;
      this.select(entry.id, { scroll: false });
      this.onOpen(entry);
    });
    this.grid.addEventListener('keydown', (event) => this.key(event));
  }

  /** Takes new entries (oldest first); they show within ARRIVAL_INTERVAL milliseconds. */
  add(entries) {
    for (const entry of entries) this.pending.push(entry);
    // A stalled tab (in the background, frames stop) must not hold more than the list would keep.
    if (this.pending.length > MAX_ROWS * 2) this.pending.splice(0, this.pending.length - MAX_ROWS);
    if (this.arrivals || this.frame) return;
    this.arrivals = setTimeout(() => {
      this.arrivals = 0;
      this.schedule();
    }, ARRIVAL_INTERVAL);
  }

  /** Pauses (new entries wait, the list stands still) or follows again. */
  setPaused(paused) {
    this.paused = paused;
    if (!paused) {
      this.pending = this.held.concat(this.pending);
      this.held = [];
    }
    this.schedule();
  }

  /** Shows only entries `predicate` accepts. */
  setFilter(predicate) {
    this.predicate = predicate;
    this.view = this.entries.filter(predicate);
    this.viewport.scrollTop = 0;
    this.schedule();
  }

  /** Forgets every entry shown so far (the server's journal is untouched). */
  clear() {
    this.entries = [];
    this.view = [];
    this.held = [];
    this.pending = [];
    this.trimmed = 0;
    this.selectedId = null;
    this.schedule();
  }

  /** The entry with `id` that the list holds, or undefined. */
  byId(id) {
    // Entries are in id order: a binary search finds one among ten thousand in fourteen steps.
    let low = 0;
    let high = this.entries.length - 1;
    while (low <= high) {
      const middle = (low + high) >> 1;
      const value = this.entries[middle].id;
      if (value === id) return this.entries[middle];
      if (value < id) low = middle + 1;
      else high = middle - 1;
    }
    return undefined;
  }

  /** Every entry held, oldest first (the body search walks these). */
  all() {
    return this.entries;
  }

  /** Entries shown, newest first. */
  shown() {
    return this.view.slice().reverse();
  }

  schedule() {
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      this.flush();
      this.render();
    });
  }

  flush() {
    if (this.pending.length === 0) return;
    const incoming = this.pending;
    this.pending = [];
    if (this.paused) {
      for (const entry of incoming) this.held.push(entry);
      if (this.held.length > MAX_ROWS) this.held.splice(0, this.held.length - MAX_ROWS);
      return;
    }
    let added = 0;
    const last = this.entries.length > 0 ? this.entries[this.entries.length - 1].id : -1;
    for (const entry of incoming) {
      if (entry.id <= last && this.byId(entry.id)) continue;
      this.entries.push(entry);
      if (this.predicate(entry)) {
        this.view.push(entry);
        added += 1;
      }
    }
    // Trim in chunks, so the arrays are not shifted once per entry.
    if (this.entries.length > MAX_ROWS + 500) {
      const remove = this.entries.length - MAX_ROWS;
      const cutoff = this.entries[remove - 1].id;
      this.entries.splice(0, remove);
      this.trimmed += remove;
      let viewRemove = 0;
      while (viewRemove < this.view.length && this.view[viewRemove].id <= cutoff) viewRemove += 1;
      this.view.splice(0, viewRemove);
    }
    // Someone reading further down keeps their rows where they are while new ones arrive above.
    if (added > 0 && this.viewport.scrollTop > 0) this.viewport.scrollTop += added * ROW_HEIGHT;
  }

  render() {
    const count = this.view.length;
    this.spacer.style.height = `${count * ROW_HEIGHT}px`;
    this.grid.setAttribute('aria-rowcount', String(count + 1));
    const top = this.viewport.scrollTop;
    const height = this.viewport.clientHeight || 600;
    const first = Math.max(0, Math.floor(top / ROW_HEIGHT) - OVERSCAN);
    const last = Math.min(count, Math.ceil((top + height) / ROW_HEIGHT) + OVERSCAN);
    const needed = last - first;
    while (this.pool.length < needed) this.pool.push(this.makeRow());
    let activeRow = null;
    for (let slot = 0; slot < this.pool.length; slot += 1) {
      const row = this.pool[slot];
      if (slot >= needed) {
        if (!row.hidden) {
          row.hidden = true;
          row.entry = null;
          delete row.dataset.id;
          row.removeAttribute('id');
        }
        continue;
      }
      const index = first + slot;
      const entry = this.view[count - 1 - index];
      row.hidden = false;
      this.fill(row, entry, index);
      if (entry.id === this.selectedId) activeRow = row;
    }
    if (activeRow) this.grid.setAttribute('aria-activedescendant', activeRow.id);
    else this.grid.removeAttribute('aria-activedescendant');
    this.empty.hidden = count > 0;
    this.empty.textContent =
      this.entries.length === 0 ? 'Waiting for requests… send one to Kakapo and it shows here.' : 'No request matches the filters.';
    this.onChange?.({ shown: count, held: this.entries.length, trimmed: this.trimmed, waiting: this.held.length });
  }

  makeRow() {
    const row = document.createElement('div');
    row.className = 'row';
    row.setAttribute('role', 'row');
    row.dataset.testid = 'row';
    row.cells = {};
    for (const [key] of COLUMNS) {
      const cell = document.createElement('span');
      cell.className = `cell c-${key}`;
      cell.setAttribute('role', 'gridcell');
      row.cells[key] = cell;
      row.append(cell);
    }
    this.viewport.append(row);
    return row;
  }

  fill(row, entry, index) {
    row.style.transform = `translateY(${index * ROW_HEIGHT}px)`;
    if (row.entry === entry) {
      setSelected(row, entry.id === this.selectedId);
      return;
    }
    row.entry = entry;
    row.dataset.id = String(entry.id);
    row.id = `row-${entry.id}`;
    row.setAttribute('aria-rowindex', String(index + 2));
    setSelected(row, entry.id === this.selectedId);
    const cells = row.cells;
    cells.time.textContent = formatClock(entry.time);
    cells.time.title = typeof entry.time === 'string' ? entry.time : '';
    cells.method.textContent = truncate(entry.method, 12);
    const status = statusClass(entry.status);
    cells.status.textContent = entry.status ? String(entry.status) : '—';
    cells.status.className = `cell c-status s-${status}`;
    const source = String(entry.source ?? '');
    cells.source.textContent = source;
    cells.source.className = `cell c-source badge src-${Object.hasOwn(SOURCES, source) ? source : 'other'}`;
    cells.source.title = SOURCES[source] ?? '';
    const host = hostOf(entry);
    cells.host.textContent = truncate(host, 120);
    cells.host.title = host;
    const path = pathOf(entry);
    cells.path.textContent = truncate(path, 400);
    cells.path.title = truncate(String(entry.url ?? ''), 2000);
    cells.ms.textContent = formatDuration(entry.ms);
    const marks = [entry.stream ? 'stream' : '', entry.webSocket ? 'WebSocket' : ''].filter(Boolean).join(', ');
    if (entry.webSocket) cells.size.textContent = 'WS';
    else if (entry.responseBytes === null && entry.stream) cells.size.textContent = 'live';
    else cells.size.textContent = formatBytes(entry.responseBytes);
    cells.size.title = marks;
    row.classList.toggle('is-miss', source === 'miss');
    row.classList.toggle('is-error', source === 'error');
    row.classList.toggle('is-stream', Boolean(entry.stream || entry.webSocket));
  }

  /** Selects the entry with `id` (and scrolls it into view unless `scroll` is false). */
  select(id, { scroll = true } = {}) {
    this.selectedId = id;
    if (scroll) this.reveal(id);
    this.schedule();
    const entry = this.byId(id);
    if (entry) this.onSelect?.(entry);
  }

  indexOf(id) {
    for (let index = this.view.length - 1; index >= 0; index -= 1) {
      if (this.view[index].id === id) return this.view.length - 1 - index;
    }
    return -1;
  }

  reveal(id) {
    const index = this.indexOf(id);
    if (index < 0) return;
    const top = index * ROW_HEIGHT;
    const viewport = this.viewport;
    if (top < viewport.scrollTop) viewport.scrollTop = top;
    else if (top + ROW_HEIGHT > viewport.scrollTop + viewport.clientHeight) {
      viewport.scrollTop = top + ROW_HEIGHT - viewport.clientHeight;
    }
  }

  /** Moves the selection by `delta` rows (positive: older, down the list). */
  move(delta) {
    const count = this.view.length;
    if (count === 0) return;
    let index = this.selectedId === null ? -1 : this.indexOf(this.selectedId);
    if (index < 0) index = delta > 0 ? -1 : count;
    const next = Math.max(0, Math.min(count - 1, index + delta));
    this.select(this.view[count - 1 - next].id);
  }

  key(event) {
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    const page = Math.max(1, Math.floor(this.viewport.clientHeight / ROW_HEIGHT) - 1);
    const moves = { ArrowDown: 1, j: 1, ArrowUp: -1, k: -1, PageDown: page, PageUp: -page };
    if (event.key in moves) {
      this.move(moves[event.key]);
    } else if (event.key === 'Home') {
      this.move(-this.view.length);
    } else if (event.key === 'End') {
      this.move(this.view.length);
    } else if (event.key === 'Enter' || event.key === ' ') {
      const entry = this.selectedId === null ? undefined : this.byId(this.selectedId);
      if (entry) this.onOpen(entry);
      else this.move(1);
    } else {
      return;
    }
    event.preventDefault();
  }

  /** Puts the keyboard focus on the list. */
  focus() {
    this.grid.focus();
  }
}

function setSelected(row, selected) {
  row.setAttribute('aria-selected', String(selected));
  row.classList.toggle('selected', selected);
}
