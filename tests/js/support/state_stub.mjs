// `getBackendURL` from Reflex's `utils/state.js`, for a page served from localhost.
export const getBackendURL = (url) => new URL(url);
