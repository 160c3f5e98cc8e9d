// The few React hooks turn_store.js uses, enough to run its hooks in Node: `render(fn)`
// runs `fn` as a component (its hooks keep their slots across renders), renders it again
// when a store it reads changes or its state is set, and runs its effects after each
// render. Synchronous on purpose: a test sees every render.
let current = null;

export function render(fn) {
  const component = { hooks: [], index: 0, renders: 0, value: undefined, effects: [], alive: true };
  component.run = () => {
    if (!component.alive) return;
    current = component;
    component.index = 0;
    component.renders += 1;
    try {
      component.value = fn();
    } finally {
      current = null;
    }
    for (const effect of component.effects.splice(0)) effect();
  };
  component.unmount = () => {
    component.alive = false;
    for (const hook of component.hooks) hook.cleanup?.();
  };
  component.run();
  return component;
}

function hook() {
  const component = current;
  const index = component.index++;
  component.hooks[index] ??= {};
  return [component, component.hooks[index]];
}

const sameDeps = (a, b) =>
  a !== undefined &&
  b !== undefined &&
  a.length === b.length &&
  a.every((x, i) => Object.is(x, b[i]));

export function useRef(initial) {
  const [, slot] = hook();
  if (!("ref" in slot)) slot.ref = { current: initial };
  return slot.ref;
}

export function useState(initial) {
  const [component, slot] = hook();
  if (!("value" in slot)) {
    slot.value = initial;
    slot.set = (next) => {
      const value = typeof next === "function" ? next(slot.value) : next;
      if (Object.is(value, slot.value)) return;
      slot.value = value;
      component.run();
    };
  }
  return [slot.value, slot.set];
}

export function useCallback(fn, deps) {
  const [, slot] = hook();
  if (!sameDeps(slot.deps, deps)) {
    slot.fn = fn;
    slot.deps = deps;
  }
  return slot.fn;
}

export function useEffect(effect, deps) {
  const [component, slot] = hook();
  if (sameDeps(slot.deps, deps)) return;
  slot.deps = deps;
  component.effects.push(() => {
    slot.cleanup?.();
    slot.cleanup = effect();
  });
}

export function useSyncExternalStore(subscribe, getSnapshot) {
  const [component, slot] = hook();
  slot.read = getSnapshot;
  slot.value = getSnapshot();
  if (slot.subscribe !== subscribe) {
    slot.cleanup?.();
    slot.subscribe = subscribe;
    slot.cleanup = subscribe(() => {
      if (!Object.is(slot.read(), slot.value)) component.run();
    });
  }
  return slot.value;
}
