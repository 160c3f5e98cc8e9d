// Module resolution for loading assets/turn_store.js under Node: its imports of React and
// of Reflex's compiled modules (which exist only in a built `.web`) go to the stand-ins
// beside this file.
const STUBS = {
  react: "./react_stub.mjs",
  "$/env.json": "./env_stub.mjs",
  "$/utils/state": "./state_stub.mjs",
};

export async function resolve(specifier, context, nextResolve) {
  if (specifier in STUBS) {
    return { url: new URL(STUBS[specifier], import.meta.url).href, shortCircuit: true };
  }
  return nextResolve(specifier, context);
}
