// events.js: the live feed, GET /__kakapo/events. Read with fetch() and a stream reader rather than
// EventSource, because EventSource cannot send the Authorization header that --admin-token asks for.
// SSEParser is pure (tested in Tests/InspectorJS/events.test.mjs); EventFeed does the network part: it
// reconnects with Last-Event-ID after the stream ends, so a restarted or briefly unreachable Kakapo loses
// nothing it still holds.

import { authHeaders, requestToken } from './api.js';

/** The longest line the parser holds before giving up on the stream: a broken server cannot fill memory. */
export const MAX_LINE = 4 * 1024 * 1024;

/**
 * An incremental parser of text/event-stream (the WHATWG "event stream interpretation"): feed it text as it
 * arrives, in any pieces; it returns the events completed so far as {type, data, id}. Comments (": keep-alive")
 * are skipped; `id` sticks to later events as the spec says; lines end in \n, \r\n or \r.
 */
export class SSEParser {
  constructor() {
    this.buffer = '';
    this.data = [];
    this.type = '';
    this.lastEventId = '';
    this.sawCR = false;
  }

  /** Parses `text` and returns the events it completed. Throws when one line is longer than MAX_LINE. */
  feed(text) {
    const events = [];
    let chunk = String(text);
    // A \r ended the previous chunk: a \n that starts this one belongs to it.
    if (this.sawCR && chunk.startsWith('\n')) chunk = chunk.slice(1);
    this.sawCR = false;
    let input = this.buffer + chunk;
    let start = 0;
    // Each search resumes where the last one found its character: a fresh indexOf('\r', start) per line
    // would scan to the end of a chunk without \r for every line (quadratic in the chunk's size).
    let lf = -2;
    let cr = -2;
    for (;;) {
      if (lf !== -1 && lf < start) lf = input.indexOf('\n', start);
      if (cr !== -1 && cr < start) cr = input.indexOf('\r', start);
      let end;
      if (lf === -1 && cr === -1) break;
      if (cr === -1 || (lf !== -1 && lf < cr)) end = lf;
      else end = cr;
      const line = input.slice(start, end);
      if (input[end] === '\r') {
        if (end + 1 < input.length) start = input[end + 1] === '\n' ? end + 2 : end + 1;
        else {
          start = end + 1;
          this.sawCR = true;
        }
      } else {
        start = end + 1;
      }
      const event = this.line(line);
      if (event) events.push(event);
    }
    this.buffer = input.slice(start);
    if (this.buffer.length > MAX_LINE) {
      this.buffer = '';
      throw new Error('the event stream sent a line longer than 4 MiB');
    }
    input = '';
    return events;
  }

  line(line) {
    if (line === '') {
      if (this.data.length === 0) {
        this.type = '';
        return null;
      }
      const event = { type: this.type || 'message', data: this.data.join('\n'), id: this.lastEventId };
      this.data = [];
      this.type = '';
      return event;
    }
    if (line.startsWith(':')) return null;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') this.data.push(value);
    else if (field === 'event') this.type = value;
    else if (field === 'id' && !value.includes('\u0000')) this.lastEventId = value;
    return null;
  }
}

/**
 * Turns one parsed event into what the page uses: {kind: 'entry', entry} for `request`, {kind: 'dropped',
 * dropped, after} for `dropped`, null for anything else or for data that is not the expected JSON.
 */
export function interpret(event) {
  if (!event || typeof event.data !== 'string') return null;
  let value;
  try {
    value = JSON.parse(event.data);
  } catch {
    return null;
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) return null;
  if (event.type === 'request' || event.type === 'message') {
    if (!Number.isSafeInteger(value.id) || value.id < 0) return null;
    return { kind: 'entry', entry: value };
  }
  if (event.type === 'dropped') {
    const dropped = Number.isSafeInteger(value.dropped) && value.dropped >= 0 ? value.dropped : 0;
    const after = Number.isSafeInteger(value.after) ? value.after : null;
    return { kind: 'dropped', dropped, after };
  }
  return null;
}

/**
 * The live feed. `onEntries(entries)` gets each batch of new entries (oldest first), `onDropped({dropped,
 * after})` a note that the server dropped entries this page was too slow for, `onState(state, detail)` the
 * connection's state: 'connecting', 'live', 'retrying', 'unauthorized', 'unavailable'; `onRestart()` that
 * a new Kakapo answers on the same address (its ids started again).
 */
export class EventFeed {
  constructor({ onEntries, onDropped, onState, onRestart, path = '/__kakapo/events' }) {
    this.onEntries = onEntries;
    this.onRestart = onRestart;
    this.onDropped = onDropped;
    this.onState = onState;
    this.path = path;
    this.lastId = null;
    this.controller = null;
    this.stopped = true;
    this.retryDelay = 500;
  }

  /** Starts reading; with `after`, only entries newer than that id (the list already holds the others). */
  start(after = null) {
    if (!this.stopped) return;
    this.stopped = false;
    if (after !== null) this.lastId = after;
    this.loop();
  }

  /** Stops reading and closes the connection. */
  stop() {
    this.stopped = true;
    this.controller?.abort();
  }

  async loop() {
    let again = false;
    while (!this.stopped) {
      this.onState('connecting');
      let outcome;
      try {
        if (again) await this.checkRestart();
        again = true;
        outcome = await this.readOnce();
      } catch (error) {
        outcome = error?.name === 'AbortError' ? 'stopped' : 'failed';
      }
      if (this.stopped || outcome === 'stopped') return;
      if (outcome === 'unauthorized') {
        this.onState('unauthorized');
        const value = await requestToken('The live feed needs this Kakapo\u2019s admin token (--admin-token).');
        if (!value) {
          this.onState('unauthorized');
          this.stopped = true;
          return;
        }
        continue;
      }
      if (outcome === 'unavailable') {
        this.onState('unavailable');
        this.stopped = true;
        return;
      }
      // The stream ended (Kakapo stopped, or the network hiccupped): try again, waiting longer each time.
      this.onState('retrying', this.retryDelay);
      await new Promise((resolve) => setTimeout(resolve, this.retryDelay));
      this.retryDelay = Math.min(this.retryDelay * 2, 10_000);
    }
  }

  // A Kakapo started again on the same address counts ids from 1, and would send nothing below the
  // Last-Event-ID this page remembers: the journal's newest id tells, before reconnecting. (Admin requests
  // take ids too, so the journal of a Kakapo that answered anything since this page saw it is never empty.)
  async checkRestart() {
    if (this.lastId === null) return;
    let newest = null;
    try {
      const response = await fetch('/__kakapo/requests', { headers: authHeaders(), cache: 'no-store', credentials: 'omit' });
      if (!response.ok) return;
      const body = await response.json();
      for (const entry of Array.isArray(body?.requests) ? body.requests : []) {
        if (Number.isSafeInteger(entry?.id) && (newest === null || entry.id > newest)) newest = entry.id;
      }
    } catch {
      return;
    }
    // An empty journal is a new Kakapo too (or one whose journal was cleared: starting the list again is
    // what the page should do then as well).
    if (newest === null || newest < this.lastId) {
      this.lastId = null;
      this.onRestart?.();
    }
  }

  async readOnce() {
    this.controller = new AbortController();
    const headers = authHeaders({ Accept: 'text/event-stream' });
    if (this.lastId !== null) headers['Last-Event-ID'] = String(this.lastId);
    const response = await fetch(this.path, {
      headers, signal: this.controller.signal, cache: 'no-store', credentials: 'omit',
    });
    if (response.status === 401) return 'unauthorized';
    if (response.status === 404 || response.status === 405) return 'unavailable';
    if (!response.ok || !response.body) return 'failed';
    this.onState('live');
    this.retryDelay = 500;
    const parser = new SSEParser();
    let first = true;
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return 'ended';
      const entries = [];
      for (const event of parser.feed(value)) {
        const item = interpret(event);
        if (!item) continue;
        if (item.kind === 'entry') {
          // The server sends only ids after Last-Event-ID, so a smaller id on a new connection means a new
          // Kakapo on the same port (ids start again): the page starts its list again. Within a connection
          // ids only grow; an older one is skipped.
          if (this.lastId !== null && item.entry.id <= this.lastId) {
            if (!first) continue;
            if (entries.length > 0) this.onEntries(entries.splice(0));
            this.onRestart?.();
          }
          first = false;
          this.lastId = item.entry.id;
          entries.push(item.entry);
        } else if (item.kind === 'dropped') {
          if (entries.length > 0) this.onEntries(entries.splice(0));
          this.onDropped(item);
        }
      }
      if (entries.length > 0) this.onEntries(entries);
    }
  }
}
