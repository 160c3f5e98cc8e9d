// The page's turn store (assets/turn_patches.js): what a frame does to the values and
// who it wakes.
import assert from "node:assert/strict";
import test from "node:test";

import { compareIds, OpenState, REPLY, TurnStore } from "../../assets/turn_patches.js";
import { memoryStorage } from "./support/fakes.mjs";

// Counts the notifications of one key, and what the key held at each.
function watch(store, messageId, key) {
  const seen = [];
  store.subscribe(messageId, key, () => seen.push(store.get(messageId, key)));
  return seen;
}

test("set gives a key its whole value", () => {
  const store = new TurnStore();
  const card = { call_id: "c1", state: "running", label: "Reading" };
  assert.equal(store.apply("m", [["set", "card:c1", card]], "1"), "applied");
  assert.deepEqual(store.get("m", "card:c1"), card);
  assert.equal(store.get("m", "card:c2"), undefined);
  assert.equal(store.get("other", "card:c1"), undefined);
});

test("add continues a string at its length in UTF-16 code units", () => {
  const store = new TurnStore();
  store.apply("m", [["add", "text:0", 0, "Hi 👋"]], "1");
  // The emoji is two code units: the server counts "Hi 👋" as 5.
  assert.equal(store.apply("m", [["add", "text:0", 5, " there"]], "2"), "applied");
  assert.equal(store.get("m", "text:0"), "Hi 👋 there");
  assert.equal(store.lastId("m"), "2");
});

test("an add that does not continue the held text is a gap and changes nothing", () => {
  const store = new TurnStore();
  store.apply("m", [["set", "text:0", "Hello"]], "1");
  const seen = watch(store, "m", "text:0");
  assert.equal(store.apply("m", [["add", "text:0", 9, "world"]], "3"), "gap");
  assert.equal(store.get("m", "text:0"), "Hello");
  assert.deepEqual(seen, []);
  // Until it starts over, no frame may build on what it holds, even one that would fit.
  assert.equal(store.held("m"), false);
  assert.equal(store.lastId("m"), undefined);
  assert.equal(store.apply("m", [["add", "text:0", 5, "!"]], "4"), "gap");
  assert.equal(store.get("m", "text:0"), "Hello");
  // A snapshot (a frame starting with a reset) resyncs it.
  assert.equal(store.apply("m", [["reset"], ["set", "text:0", "Hello world"]], "4"), "applied");
  assert.equal(store.get("m", "text:0"), "Hello world");
  assert.equal(store.held("m"), true);
  assert.equal(store.lastId("m"), "4");
});

test("a gap stops the frame at the op that does not fit", () => {
  const store = new TurnStore();
  store.apply("m", [["set", "text:0", "ab"]], "1");
  store.apply("m", [["set", "card:c1", 1], ["add", "text:0", 1, "c"], ["set", "card:c2", 2]], "2");
  assert.equal(store.get("m", "card:c1"), 1);
  assert.equal(store.get("m", "text:0"), "ab");
  assert.equal(store.get("m", "card:c2"), undefined);
});

test("reset forgets the message's keys and wakes their readers", () => {
  const store = new TurnStore();
  store.apply("m", [["set", "text:0", "old"], ["set", "card:c1", { state: "done" }]], "5");
  store.apply("n", [["set", "text:0", "other turn"]], "2");
  const text = watch(store, "m", "text:0");
  const card = watch(store, "m", "card:c1");
  store.apply("m", [["reset"], ["set", "text:0", "new"]], "7");
  assert.deepEqual(text, ["new"]);
  assert.deepEqual(card, [undefined]);
  assert.equal(store.get("n", "text:0"), "other turn");
});

test("a frame wakes only the readers of the keys it touched, once each, when it is whole", () => {
  const store = new TurnStore();
  const label = watch(store, "m", "card:c1");
  const other = watch(store, "m", "card:c2");
  const elsewhere = watch(store, "n", "card:c1");
  const title = [];
  // A reader woken for the title already sees the label set later in the same frame.
  store.subscribe("m", "title:c1", () => title.push(store.get("m", "card:c1")));
  const ops = [["set", "card:c1", "Re"], ["set", "title:c1", "R"], ["set", "card:c1", "Read"]];
  store.apply("m", ops, "1");
  assert.deepEqual(label, ["Read"]);
  assert.deepEqual(title, ["Read"]);
  assert.deepEqual(other, []);
  assert.deepEqual(elsewhere, []);
});

test("a reader that unsubscribes is not woken again", () => {
  const store = new TurnStore();
  let calls = 0;
  const stop = store.subscribe("m", "text:0", () => (calls += 1));
  store.apply("m", [["add", "text:0", 0, "a"]], "1");
  stop();
  store.apply("m", [["add", "text:0", 1, "b"]], "2");
  assert.equal(calls, 1);
});

test("a frame the page already holds is skipped, a snapshot never is", () => {
  const store = new TurnStore();
  store.apply("m", [["add", "text:0", 0, "ab"]], "10");
  assert.equal(store.apply("m", [["add", "text:0", 0, "ab"]], "10"), "stale");
  assert.equal(store.apply("m", [["add", "text:0", 0, "ab"]], "9.2"), "stale");
  assert.equal(store.apply("m", [["add", "text:0", 2, "c"]], "10.1"), "applied");
  assert.equal(store.get("m", "text:0"), "abc");
  assert.equal(store.apply("m", [["reset"], ["set", "text:0", "x"]], "3"), "applied");
  assert.equal(store.get("m", "text:0"), "x");
});

test("frame ids order by sequence number, then by the held header's count", () => {
  const ids = ["11", "10.2", "9", "10", "10.1"];
  assert.deepEqual(ids.sort(compareIds), ["9", "10", "10.1", "10.2", "11"]);
});

test("clear forgets a message; a flag set afterwards counts as held", () => {
  const store = new TurnStore();
  store.apply("m", [["set", "text:0", "secret"]], "3");
  const seen = watch(store, "m", "text:0");
  store.clear("m");
  assert.deepEqual(seen, [undefined]);
  assert.equal(store.held("m"), false);
  store.set("m", "revoked", true);
  assert.equal(store.get("m", "revoked"), true);
  assert.equal(store.held("m"), true);
});

test("release keeps what a message shows but asks for it again", () => {
  const store = new TurnStore();
  store.apply("m", [["set", "text:0", "partial"]], "3");
  store.release("m");
  assert.equal(store.get("m", "text:0"), "partial");
  assert.equal(store.held("m"), false);
  assert.equal(store.lastId("m"), undefined);
});

test("the reply source joins the text parts a paragraph apart", () => {
  const store = new TurnStore();
  const turn = {
    parts: [
      { kind: "text", key: "text:0" },
      { kind: "group", key: "group:1" },
      { kind: "text", key: "text:2" },
      { kind: "text", key: "text:3" },
    ],
  };
  let woken = 0;
  store.subscribe("m", REPLY, () => (woken += 1));
  const ops = [["set", "turn", turn], ["set", "text:0", "\nFirst.  "], ["set", "text:3", "Last."]];
  store.apply("m", ops, "1");
  assert.equal(store.replySource("m"), "First.\n\nLast.");
  assert.equal(woken, 1);
  store.apply("m", [["set", "card:c1", { state: "done" }]], "2");
  assert.equal(woken, 1); // a card is not part of the reply
  store.apply("m", [["add", "text:3", 5, " Done"]], "3");
  assert.equal(woken, 2);
  assert.equal(store.replySource("m"), "First.\n\nLast. Done");
  assert.equal(store.replySource("unknown"), "");
});

test("open state keeps toggles in storage, newest first to survive the limit", () => {
  const storage = memoryStorage();
  const open = new OpenState(storage, "iu-open", 2);
  let woken = 0;
  open.subscribe("g1", () => (woken += 1));
  assert.equal(open.get("g1"), undefined);
  open.set("g1", true);
  open.set("g2", false);
  open.set("g1", false);
  open.set("g3", true); // over the limit: g2 was toggled longest ago
  assert.equal(woken, 2);
  const reloaded = new OpenState(storage, "iu-open", 2);
  assert.equal(reloaded.get("g1"), false);
  assert.equal(reloaded.get("g2"), undefined);
  assert.equal(reloaded.get("g3"), true);
});

test("open state works without usable storage", () => {
  const broken = {
    getItem: () => "{not json",
    setItem: () => {
      throw new Error("QuotaExceededError");
    },
  };
  const open = new OpenState(broken);
  open.set("g1", true);
  assert.equal(open.get("g1"), true);
  const none = new OpenState(null);
  none.set("g1", false);
  assert.equal(none.get("g1"), false);
});
