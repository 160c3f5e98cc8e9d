// The turn feed (assets/turn_feed.js): snapshots, the live turn's stream, resyncs and
// refusals, driven through fake EventSource, fetch and timers.
import assert from "node:assert/strict";
import test from "node:test";

import { TurnFeedClient } from "../../assets/turn_feed.js";
import { TurnStore } from "../../assets/turn_patches.js";
import { fakeFetch, FakeSource, fakeTimers, settle } from "./support/fakes.mjs";

const BASE = "http://127.0.0.1:8000";

// A snapshot answer: the turn's text as its only key.
const snapshotOf = (id, text, last = "4") => ({
  id: last,
  ops: [["reset"], ["set", "text:0", text]],
});

function setup({ answer = () => ({ body: { turns: {} } }) } = {}) {
  const store = new TurnStore();
  const sources = [];
  const timers = fakeTimers();
  const { fetch, calls } = fakeFetch(answer);
  class EventSource extends FakeSource {
    constructor(url) {
      super(url, sources);
    }
  }
  const client = new TurnFeedClient(store, { base: BASE, EventSource, fetch, ...timers });
  const expired = [];
  const props = {
    conversation: "c1",
    token: "t1",
    lang: "en",
    ids: "",
    live: "",
    onExpired: () => expired.push(client.props.token),
  };
  const update = (changes) => client.update(Object.assign(props, changes));
  return { store, sources, timers, calls, client, expired, update };
}

test("snapshots are fetched once for the ids the page does not hold", async () => {
  const { store, calls, update } = setup({
    answer: (url) => ({
      body: {
        turns: Object.fromEntries(
          url.searchParams.get("ids").split(",").map((id) => [id, snapshotOf(id, `reply ${id}`)]),
        ),
      },
    }),
  });
  update({ ids: "a,b" });
  update({ ids: "a,b" }); // asked already: not again
  await settle();
  assert.equal(calls.length, 1);
  assert.equal(calls[0].pathname, "/_iu/turns");
  assert.equal(calls[0].searchParams.get("ids"), "a,b");
  assert.equal(calls[0].searchParams.get("token"), "t1");
  assert.equal(calls[0].searchParams.get("lang"), "en");
  assert.equal(store.get("a", "text:0"), "reply a");
  assert.equal(store.lastId("b"), "4");
  update({ ids: "a,b,c" });
  await settle();
  assert.equal(calls[1].searchParams.get("ids"), "c");
});

test("another language drops every turn held and fetches them again", async () => {
  const { store, calls, update } = setup({
    answer: (url) => ({
      body: { turns: { a: snapshotOf("a", `in ${url.searchParams.get("lang")}`) } },
    }),
  });
  update({ ids: "a" });
  await settle();
  assert.equal(store.get("a", "text:0"), "in en");
  update({ lang: "fr" });
  assert.equal(store.get("a", "text:0"), undefined); // never the other language's text
  await settle();
  assert.equal(calls.length, 2);
  assert.equal(store.get("a", "text:0"), "in fr");
});

test("an answer for a conversation left meanwhile is dropped", async () => {
  let release;
  const { store, update } = setup({
    answer: () => new Promise((resolve) => (release = resolve)),
  });
  update({ ids: "a" });
  update({ conversation: "c2", ids: "" });
  release({ body: { turns: { a: snapshotOf("a", "from c1") } } });
  await settle();
  assert.equal(store.held("a"), false);
});

test("the live turn's stream is applied frame by frame and closed at its end", () => {
  const { store, sources, calls, update } = setup();
  update({ ids: "m", live: "m" });
  assert.equal(calls.length, 0); // the stream brings the live turn, not a snapshot
  assert.equal(sources.length, 1);
  const [source] = sources;
  assert.equal(source.url.pathname, "/_iu/turns/m/stream");
  assert.equal(source.url.searchParams.get("from"), null);
  source.frame("m", [["reset"], ["add", "text:0", 0, "Hel"]], "1");
  source.frame("m", [["add", "text:0", 3, "lo"]], "2");
  assert.equal(store.get("m", "text:0"), "Hello");
  source.event("end");
  assert.equal(source.closed, true);
  update({ token: "t2" }); // still `live` in the props: the ended stream is not reopened
  assert.equal(sources.length, 1);
  assert.equal(store.lastId("m"), "2");
});

test("a stream for a turn the page holds resumes after its last frame", async () => {
  const { sources, update } = setup({
    answer: () => ({ body: { turns: { m: snapshotOf("m", "so far", "7.1") } } }),
  });
  update({ ids: "m" });
  await settle();
  update({ live: "m" });
  assert.equal(sources[0].url.searchParams.get("from"), "7.1");
});

test("a gap reopens the stream from the start, and its first frame replaces the text", () => {
  const { store, sources, timers, update } = setup();
  update({ ids: "m", live: "m" });
  sources[0].frame("m", [["add", "text:0", 0, "Hello"]], "1");
  sources[0].frame("m", [["add", "text:0", 9, "lost"]], "3");
  assert.equal(store.get("m", "text:0"), "Hello"); // old, not wrong
  assert.equal(sources[0].closed, true);
  assert.deepEqual(timers.runAll(), [0]);
  assert.equal(sources.length, 2);
  assert.equal(sources[1].url.searchParams.get("from"), null);
  // The server starts over with the turn's first frame, no reset in it.
  sources[1].frame("m", [["add", "text:0", 0, "Hi"]], "1");
  assert.equal(store.get("m", "text:0"), "Hi");
  sources[1].frame("m", [["add", "text:0", 2, " again"]], "2");
  assert.equal(store.get("m", "text:0"), "Hi again");
});

test("a revoked link closes the stream and clears the turn", () => {
  const { store, sources, update } = setup();
  update({ ids: "m", live: "m" });
  sources[0].frame("m", [["set", "text:0", "shared text"]], "1");
  sources[0].event("revoked");
  assert.equal(sources[0].closed, true);
  assert.equal(store.get("m", "text:0"), undefined);
  assert.equal(store.get("m", "revoked"), true);
});

test("a refused token asks for a new one once, and the new one reconnects", async () => {
  const { sources, calls, expired, update } = setup({
    answer: (url) => ({ status: url.searchParams.get("token") === "t1" ? 401 : 200 }),
  });
  update({ ids: "m", live: "m" });
  sources[0].frame("m", [["set", "text:0", "a"]], "3");
  sources[0].refuse();
  await settle();
  assert.equal(calls.at(-1).pathname, "/_iu/turns/m/stream"); // the status, asked by fetch
  assert.deepEqual(expired, ["t1"]);
  update({ ids: "m,n" }); // the old token again: no new stream, no new request
  await settle();
  assert.equal(sources.length, 1);
  assert.deepEqual(expired, ["t1"]);
  update({ token: "t2" });
  assert.equal(sources.length, 2);
  assert.equal(sources[1].url.searchParams.get("token"), "t2");
  assert.equal(sources[1].url.searchParams.get("from"), "3");
});

test("other refusals are retried after 1 s, 2 s, ... up to 10 s", async () => {
  const { sources, timers, expired, update } = setup({ answer: () => ({ status: 503 }) });
  update({ ids: "m", live: "m" });
  const delays = [];
  for (let i = 0; i < 6; i++) {
    sources.at(-1).refuse();
    await settle();
    delays.push(...timers.runAll());
  }
  assert.deepEqual(delays, [1000, 2000, 4000, 8000, 10000, 10000]);
  assert.equal(sources.length, 7);
  assert.deepEqual(expired, []);
});

test("a live turn left before its end is fetched as a snapshot", async () => {
  const { store, sources, calls, update } = setup({
    answer: () => ({ body: { turns: { m: snapshotOf("m", "the whole reply", "9") } } }),
  });
  update({ ids: "m", live: "m" });
  sources[0].frame("m", [["add", "text:0", 0, "the wh"]], "2");
  update({ live: "" });
  assert.equal(sources[0].closed, true);
  assert.equal(store.get("m", "text:0"), "the wh"); // shown until the snapshot comes
  await settle();
  assert.equal(calls[0].searchParams.get("ids"), "m");
  assert.equal(store.get("m", "text:0"), "the whole reply");
});

test("a token refused by the snapshot and the stream is renewed once", async () => {
  const { sources, calls, expired, update } = setup({
    answer: (url) =>
      url.searchParams.get("token") === "t1" ? { status: 401 } : { body: { turns: {} } },
  });
  update({ ids: "a,m", live: "m" });
  sources[0].refuse();
  await settle();
  assert.deepEqual(expired, ["t1"]);
  update({ token: "t2" });
  await settle();
  assert.equal(calls.at(-1).pathname, "/_iu/turns");
  assert.equal(calls.at(-1).searchParams.get("token"), "t2");
  assert.equal(sources.at(-1).url.searchParams.get("token"), "t2");
});

test("a call's detail comes with the feed's token and language", async () => {
  const detail = { label: "Read the notes", arguments: '{\n  "path": "notes.md"\n}', result: "" };
  const { client, calls, update } = setup({
    answer: (url) =>
      url.pathname.endsWith("/calls/c9")
        ? { body: detail }
        : { status: 404, body: { error: "No such call." } },
  });
  assert.equal(await client.fetchDetail("m", "c9"), null); // no props yet
  update({ ids: "" });
  assert.deepEqual(await client.fetchDetail("m", "c9"), detail);
  assert.equal(calls.at(-1).pathname, "/_iu/turns/m/calls/c9");
  assert.equal(calls.at(-1).searchParams.get("token"), "t1");
  assert.deepEqual(await client.fetchDetail("m", "c1"), { error: "No such call." });
});

test("a waiting approval's detail has the tool's arguments and the text to edit", async () => {
  const detail = {
    label: "Deleting the staging migrations",
    arguments: "{}",
    result: "",
    tool_arguments: '{\n  "path": "migrations/staging"\n}',
    editable: '{\n  "intent": "Deleting the staging migrations"\n}',
  };
  const { client, update } = setup({ answer: () => ({ body: detail }) });
  update({ ids: "" });
  assert.deepEqual(await client.fetchDetail("m", "d1"), detail);
});
