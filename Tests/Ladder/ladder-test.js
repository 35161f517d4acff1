// The browser ladder's test (Sources/CallsServer/Client/ladder.js) against the marble cases the
// Swift ladder is held to (receiver-ladder-cases.json): the same marble runner as
// ReceiverLadderTests.swift, and every step, notice, marble and final rung must match. Runs in
// headless Chromium (scripts/gates/client.py); the result goes into the page as JSON.
'use strict';

(() => {
  const { ReceiverLadder } = globalThis.SharectlLadder;
  const letters = { keyframe: 'K', rebuild: 'R', shareAgain: 'A', giveUp: 'G', held: 'h', recovered: 'r' };

  function play(runs) {
    const ladder = new ReceiverLadder();
    return runs.map((run) => {
      const at = (run.at || 0) * 1000;
      const ids = Object.keys(run.timelines).sort();
      const people = {};
      for (const id of ids) people[id] = { name: id[0].toUpperCase() + id.slice(1), framesSent: 0, keyframesSent: 0 };
      const out = { marbles: {}, notices: [], steps: [], rungs: {} };
      for (const id of ids) out.marbles[id] = '';
      const length = Math.max(...ids.map((id) => run.timelines[id].length));
      for (let second = 0; second < length; second += 1) {
        const observed = {};
        for (const id of ids) {
          const event = run.timelines[id][second];
          if (event === '.') continue;
          const person = people[id];
          if (event === '0') { person.framesSent = 0; person.keyframesSent = 0; }
          if (event !== 'x') person.framesSent += 30;
          if (event === 'k') person.keyframesSent += 1;
          observed[id] = { name: person.name, stalled: event !== '-' && event !== 'c',
                           framesSent: person.framesSent, keyframesSent: person.keyframesSent,
                           framesDecoded: event === 'c' ? 0 : null };
        }
        const steps = ladder.tick(at + second * 1000, observed);
        out.steps.push(...steps.map(String));
        for (const id of ids) {
          const marks = steps.filter((s) => s.action.subject === id
              || (s.action.name === 'shareAgain' && s.reason.startsWith(people[id].name)))
            .filter((s) => s.action.name !== 'notice')
            .map((s) => letters[s.action.name] || '?');
          out.marbles[id] += marks.length === 0 ? '-' : marks.length === 1 ? marks[0] : `(${marks.join('')})`;
        }
        for (const s of steps) if (s.action.name === 'notice') out.notices.push(s.action.text === null ? '(cleared)' : s.action.text);
      }
      for (const id of ids) out.rungs[id] = ladder.rungOf(id);
      return out;
    });
  }

  const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
  const sortKeys = (o) => Object.keys(o).sort().reduce((r, k) => { r[k] = o[k]; return r; }, {});

  globalThis.runLadderCases = (document) => {
    const results = [];
    for (const c of document.cases) {
      let outcomes;
      try { outcomes = play(c.runs); } catch (error) { results.push({ name: c.name, ok: false, error: String(error) }); continue; }
      c.runs.forEach((run, index) => {
        const want = run.expect, got = outcomes[index];
        const problems = [];
        for (const field of ['marbles', 'rungs']) {
          if (!same(sortKeys(want[field]), sortKeys(got[field]))) problems.push({ field, want: want[field], got: got[field] });
        }
        for (const field of ['notices', 'steps']) {
          if (!same(want[field], got[field])) problems.push({ field, want: want[field], got: got[field] });
        }
        results.push({ name: `${c.name}, run ${index + 1}`, ok: problems.length === 0, problems });
      });
    }
    return { cases: document.cases.length, runs: results.length, passed: results.filter((r) => r.ok).length,
             failed: results.filter((r) => !r.ok) };
  };
})();
