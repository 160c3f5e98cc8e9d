// What Reflex writes to `.web/env.json` for a backend on port 8000.
export default { EVENT: "ws://localhost:8000/_event", PING: "http://localhost:8000/ping" };
