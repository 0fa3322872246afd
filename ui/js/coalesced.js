// One async step at a time, however often it is asked for: the pane's live reads (the output
// log, a task's detail) use it so that reads never overlap and the last one starts after the
// last request for it. No DOM.

/**
 * Runs `step` one at a time. A call while it runs asks for one more run after it; any number of
 * calls meanwhile make one. `step` resolves true to run again at once (more is waiting).
 * @param {() => Promise<boolean>} step
 * @returns {() => Promise<void>} resolves when the runs it joined are over
 */
export function coalesced(step) {
  let running = null;
  let again = false;
  return function kick() {
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      try {
        do {
          again = false;
          if (await step()) again = true;
        } while (again);
      } finally {
        running = null;
      }
    })();
    return running;
  };
}
