'use strict';
// Which cassette a node:test test gets: named after its full name (`describe > test`) where node:test
// tells hooks that (TestContext.fullName: Node 22.3 and 20.16 on), else after its own name; and no two
// different tests of one process with the same name share one.

const { KakapoError } = require('./errors');

/** Whether this test context gives its full name (its describe blocks' names and its own). */
function hasFullName(t) {
  return Boolean(t) && typeof t.fullName === 'string' && t.fullName !== '';
}

/** The name a test's cassette is named after: `outer > inner > test` where node:test tells it, else `test`. */
function testName(t) {
  if (!t) return undefined;
  return hasFullName(t) ? t.fullName : t.name;
}

/**
 * Tells which test took which cassette in this process, and refuses a second, different test on the
 * same cassette: two tests `x` in two describe blocks, on a Node whose hooks know only `x`, two tests of
 * one name in one block, or two names that give one file name (`get[1]`, `get_1`). With the `cassette`
 * option (`chosen`), tests of different names may share a cassette: that is the option's choice.
 */
class CassetteClaims {
  constructor() {
    this.claims = new Map();
  }

  claim(cassette, test, name, file, { chosen = false } = {}) {
    const first = this.claims.get(cassette);
    if (!first) {
      this.claims.set(cassette, { test, name });
      return;
    }
    if (first.test === test || (chosen && first.name !== name)) return;
    const named = first.name === name ? `two tests named ${JSON.stringify(name)}` : `the tests ${JSON.stringify(first.name)} and ${JSON.stringify(name)}`;
    const why = hasFullName(test)
      ? ''
      : " This Node's node:test tells hooks a test's own name only, not its describe blocks' (Node 22.3 and 20.16 on tell both).";
    throw new KakapoError(
      `kakapo-proxy/node-test: ${named} in ${file} would share the cassette ${cassette}, ` +
        `each overwriting what the other recorded.${why} Give them distinct names, or choose each test's cassette ` +
        'with useKakapo({ cassette: ({ file, name }) => ... }).',
    );
  }
}

exports.hasFullName = hasFullName;
exports.testName = testName;
exports.CassetteClaims = CassetteClaims;
