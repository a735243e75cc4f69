'use strict';

/** What kakapo-proxy throws when Kakapo cannot be found, started, asked, or a session missed. */
class KakapoError extends Error {
  constructor(message, options) {
    super(message, options);
    this.name = 'KakapoError';
    // What went wrong is all in the message (a missing binary, Kakapo's miss report): no stack trace
    // of kakapo-proxy's insides under it.
    this.stack = `${this.name}: ${this.message}`;
  }
}

exports.KakapoError = KakapoError;
