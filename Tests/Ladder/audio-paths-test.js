// The browser's who-hears-whom rules and speaking indicator (Sources/CallsServer/Client/
// audiopaths.js) against the cases sharectl's rules are held to (audio-path-cases.json): the same
// marble runners as AudioPathRulesTests.swift and SpeakingIndicatorTests.swift. Runs in headless
// Chromium (scripts/gates/client.py); the result goes into the page as JSON.
'use strict';

(() => {
  const { AudioPathRules, SpeakingIndicator } = globalThis.SharectlAudioPaths;

  function theirs(timeline) {
    const rules = new AudioPathRules();
    rules.joined('bo', 0);
    let samples = 0;
    return [...timeline].map((event, second) => {
      if ('tqm'.includes(event)) samples += 48000;
      const verdict = rules.observe('bo', {
        connected: event !== 'x', theySendAudio: event !== 'n', samplesDecoded: samples,
        levelDbfs: event === 't' ? -20 : -120, theyAreMuted: event === 'm', theyHearUs: true,
        theyHearNoSoundFromUs: false, weSendAudio: true, weAreMuted: false,
      }, second * 1000);
      return verdict.reconnecting ? 'R' : verdict.noSound ? 'N' : verdict.hearing ? 'H' : '.';
    }).join('');
  }

  function ours(timeline, muted, sending) {
    const rules = new AudioPathRules();
    rules.joined('bo', 0);
    return [...timeline].map((event, second) => {
      const verdict = rules.observe('bo', {
        connected: event !== 'c', theySendAudio: false, samplesDecoded: 0, levelDbfs: -120, theyAreMuted: false,
        theyHearUs: event === 'h' || event === 's', theyHearNoSoundFromUs: event === 's',
        weSendAudio: sending, weAreMuted: muted,
      }, second * 1000);
      return verdict.connecting ? 'C' : verdict.notGettingOurSound ? 'G' : '.';
    }).join('');
  }

  function speaking(levels) {
    const indicator = new SpeakingIndicator();
    return levels.map((level, index) => (indicator.level(level, index * 100) ? 'S' : '.')).join('');
  }

  globalThis.runAudioPathCases = (document) => {
    const results = [];
    const check = (kind, c, got) => results.push({ name: `${kind}: ${c.name}`, ok: got === c.expect, want: c.expect, got });
    for (const c of document.theirs) check('theirs', c, theirs(c.timeline));
    for (const c of document.ours) check('ours', c, ours(c.timeline, !!c.muted, c.sending !== false));
    for (const c of document.speaking) check('speaking', c, speaking(c.levels));
    return { cases: results.length, runs: results.length, passed: results.filter((r) => r.ok).length,
             failed: results.filter((r) => !r.ok) };
  };
})();
