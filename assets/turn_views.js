// What each memoized turn component reads from the page's turn store (turn_store.js):
// one hook per component, returning records with every field present, so a component
// renders the same before its key arrives as with an empty record, and never reads
// undefined. Opening a card or a group is the page's own state: no round trip.
import { useEffect } from "react";
import {
  isOpen as heldOpen, toggleOpen, useCallDetail, useCanDecide, useReplySource, useTurnEntry,
  useTurnOpen,
} from "./turn_store.js";

const NO_TURN = Object.freeze({
  status: "", goal: "", timeline: false, failure: "", failure_hint: "", error: "", waiting: "",
  parts: [],
});
const NO_GROUP = Object.freeze({
  key: "", single: true, header: "", header_key: "", suffix: "", aria_label: "",
  glyph: "tools", live: false, phase: "in_flight", open: true, calm: false, lazy: false,
  waiting: false, compact_key: "", started_at: "", settled_at: "", elapsed: "", ticking: false,
});
const NO_CARD = Object.freeze({
  call_id: "", state: "streaming", label: "", live: false, label_key: "",
  started_at: "", settled_at: "", elapsed: "", ticking: false,
});
const NO_DETAIL = Object.freeze({
  label: "", arguments: "", result: "", tool_arguments: "", editable: "",
});
// A call that waits for nobody: `state` "" renders no approval or question.
const NO_APPROVAL = Object.freeze({
  state: "", prompt: "", title: "", tool: "", agent_scope: false, decision: "", edited: false,
  approve: "", always_conversation: "", always_agent: "", deny: "", reason: "", edit: "",
  edit_submit: "", arguments: "", waiting: "",
});
const NO_QUESTION = Object.freeze({
  state: "", question: "", choices: [], answer: "", answered: "", placeholder: "", submit: "",
});
const NO_CARDS = Object.freeze([]);
// A call with no child turn: `name` "" renders no ticker.
const NO_TICKER = Object.freeze({
  name: "", latest: "", calls: "", model: "", live: false, waiting: [],
  started_at: "", settled_at: "", elapsed: "", ticking: false,
});

const cardOpenKey = (messageId, callId) => `${messageId}:call:${callId}`;
const editKey = (messageId, callId) => `${messageId}:edit:${callId}`;
const groupNumber = (partKey) => String(partKey).replace(/^group:/, "");

export function useTurnView(messageId) {
  const turn = useTurnEntry(messageId, "turn") ?? NO_TURN;
  const reply = useReplySource(messageId) ?? "";
  useWaitingTitle(turn.waiting);
  return { turn, reply };
}

// While a turn waits for the reader, the browser tab's title says so ("Approval needed ·
// Intent UI"), so a reader in another tab sees it.
function useWaitingTitle(waiting) {
  useEffect(() => {
    if (!waiting || typeof document === "undefined") return undefined;
    const before = document.title;
    const shown = `${waiting} · ${before}`;
    document.title = shown;
    return () => {
      if (document.title === shown) document.title = before;
    };
  }, [waiting]);
}

export function useGroupView(messageId, partKey) {
  const g = groupNumber(partKey);
  const group = useTurnEntry(messageId, `group:${g}`) ?? NO_GROUP;
  const cards = useTurnEntry(messageId, `cards:${g}`) ?? NO_CARDS;
  const title = useTurnEntry(messageId, `title:group:${g}`) ?? "";
  const held = useTurnOpen(group.key || `${messageId}:${g}`, group.open);
  const compactHeld = useTurnOpen(group.compact_key || `${messageId}:${g}:compact`, false);
  // A group does not collapse while one of its calls waits for the reader.
  const open = held || group.waiting;
  const compactOpen = compactHeld || group.waiting;
  return { group, cards, title, open, compactOpen };
}

export function useCallView(messageId, callId) {
  const card = useTurnEntry(messageId, `card:${callId}`) ?? NO_CARD;
  const title = useTurnEntry(messageId, `title:${callId}`) ?? "";
  const expanded = useTurnOpen(cardOpenKey(messageId, callId), false);
  const approval = useTurnEntry(messageId, `approval:${callId}`) ?? NO_APPROVAL;
  const question = useTurnEntry(messageId, `question:${callId}`) ?? NO_QUESTION;
  const canDecide = useCanDecide();
  const editing = useTurnOpen(editKey(messageId, callId), false);
  // An approval waiting for this reader shows the exact arguments: fetched as the detail.
  const wanted = expanded || (canDecide && approval.state === "waiting");
  // Fetched again when what the card shows changes while it is open (a live call).
  const found = useCallDetail(messageId, callId, wanted, `${card.state}|${card.label}`);
  const detail = found && !found.loading && !found.error ? { ...NO_DETAIL, ...found } : NO_DETAIL;
  const waiting = approval.state === "waiting" || question.state === "waiting";
  return { card, title, expanded, detail, approval, question, canDecide, editing, waiting };
}

// A subagent call's child turn: its ticker line and its calls (each a card of its own).
export function useSubagentView(messageId, callId) {
  const ticker = useTurnEntry(messageId, `ticker:${callId}`) ?? NO_TICKER;
  const children = useTurnEntry(messageId, `children:${callId}`) ?? NO_CARDS;
  return { ticker, children };
}

export function useMarkView(messageId, callId) {
  const card = useTurnEntry(messageId, `card:${callId}`) ?? NO_CARD;
  const approval = useTurnEntry(messageId, `approval:${callId}`) ?? NO_APPROVAL;
  const question = useTurnEntry(messageId, `question:${callId}`) ?? NO_QUESTION;
  const waiting = approval.state === "waiting" || question.state === "waiting";
  return { card, waiting };
}

export function useTextView(messageId, partKey) {
  return useTurnEntry(messageId, partKey) ?? "";
}

export function useAnnouncement(messageId) {
  return useTurnEntry(messageId || "", "announce") ?? "";
}

// Event triggers pass the event last; these take only their own arguments.
export function toggleCard(messageId, callId) {
  const key = cardOpenKey(messageId, callId);
  toggleOpen(key, isOpen(key, false));
}

// Opens or closes an approval's argument editor.
export function toggleEdit(messageId, callId) {
  const key = editKey(messageId, callId);
  toggleOpen(key, isOpen(key, false));
}

// The text of a field of a card (an approval's reason or edited arguments, a question's
// answer), read when its button is pressed; "" when it is not on the page.
export function fieldValue(id) {
  if (typeof document === "undefined") return "";
  const field = document.getElementById(id);
  return field && typeof field.value === "string" ? field.value : "";
}

// Intents keeps every group open; header-only keeps its own open state per group; a group
// with a call waiting for the reader stays open until it is answered.
export function toggleGroup(group, density, currentlyOpen) {
  if (density === "intents" || group.waiting) return;
  toggleOpen(density === "header" ? group.compact_key : group.key, currentlyOpen);
}

// A timeline mark opens its card and the card's group, in every density; never closes.
export function openCard(messageId, callId, groupKey) {
  const key = cardOpenKey(messageId, callId);
  if (!isOpen(key, false)) toggleOpen(key, false);
  if (groupKey) {
    if (!isOpen(groupKey, false)) toggleOpen(groupKey, false);
    const compact = `${groupKey}:compact`;
    if (!isOpen(compact, false)) toggleOpen(compact, false);
  }
}

function isOpen(key, fallback) {
  return heldOpen(key) ?? fallback;
}
