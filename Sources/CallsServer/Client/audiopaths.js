// Who hears whom, and the speaking indicator: the browser client's copy of sharectl's
// AudioPathRules.swift and SpeakingIndicator.swift, the same rules, figures and words (seed 000).
// Pure values on the caller's clock (milliseconds); room.js feeds them. The shared cases in
// Tests/Ladder/audio-path-cases.json hold both copies to the same answers.
'use strict';

(() => {
  const HEARD_WITHIN_MS = 2000;
  const NO_SOUND_DBFS = -85;
  const NO_SOUND_AFTER_MS = 5000;
  const RECONNECTING_AFTER_MS = 2000;
  const CONNECTING_GRACE_MS = 1000;
  const CONNECTING_AT_MOST_MS = 20000;
  const NOT_GETTING_AFTER_MS = 5000;

  // The words for a participant called `name`, most pressing first.
  function notices(verdict, name) {
    const lines = [];
    if (verdict.reconnecting) lines.push(`Reconnecting to ${name}…`);
    if (verdict.noSound) lines.push(`No sound from ${name}`);
    if (verdict.connecting) lines.push(`${name} is connecting and can't hear you yet`);
    if (verdict.notGettingOurSound) lines.push(`${name} isn't getting any sound from you`);
    return lines;
  }

  class AudioPathRules {
    constructor() { this.paths = new Map(); }

    joined(id, now) {
      if (!this.paths.has(id)) this.paths.set(id, AudioPathRules.path(now));
    }

    left(id) { this.paths.delete(id); }

    static path(now) {
      return { joinedAt: now, connectedSince: null, samples: 0, decodedAt: null, quietSince: null,
               heardUsOnce: false, notHearingUsSince: null };
    }

    // seen: { connected, theySendAudio, samplesDecoded, levelDbfs, theyAreMuted, theyHearUs,
    //         theyHearNoSoundFromUs, weSendAudio, weAreMuted }
    observe(id, seen, now) {
      const path = this.paths.get(id) || AudioPathRules.path(now);
      this.paths.set(id, path);
      const verdict = { hearing: false, noSound: false, reconnecting: false, connecting: false, notGettingOurSound: false };

      // Their audio to us.
      path.connectedSince = seen.connected ? (path.connectedSince === null ? now : path.connectedSince) : null;
      if (seen.samplesDecoded > path.samples) path.decodedAt = now;
      if (seen.samplesDecoded < path.samples) path.decodedAt = null;  // a new receiver counts afresh
      path.samples = seen.samplesDecoded;
      const flowing = path.decodedAt !== null && now - path.decodedAt < HEARD_WITHIN_MS;
      verdict.hearing = seen.connected && (flowing || seen.theyAreMuted);
      if (seen.connected && flowing && !seen.theyAreMuted && seen.levelDbfs < NO_SOUND_DBFS) {
        if (path.quietSince === null) path.quietSince = now;
      } else {
        path.quietSince = null;
      }
      verdict.noSound = path.quietSince !== null && now - path.quietSince >= NO_SOUND_AFTER_MS;
      if (path.connectedSince !== null && seen.theySendAudio && !seen.theyAreMuted && !flowing) {
        const since = path.connectedSince;
        const lastAudio = Math.max(since, path.decodedAt === null ? since : path.decodedAt);
        verdict.reconnecting = now - since >= RECONNECTING_AFTER_MS && now - lastAudio >= RECONNECTING_AFTER_MS;
      }

      // Our audio to them, as their report says.
      if (seen.theyHearUs) path.heardUsOnce = true;
      const sinceJoin = now - path.joinedAt;
      const unmutedSend = seen.weSendAudio && !seen.weAreMuted;
      verdict.connecting = seen.weSendAudio && !path.heardUsOnce && !seen.theyHearNoSoundFromUs
        && sinceJoin >= CONNECTING_GRACE_MS && sinceJoin < CONNECTING_AT_MOST_MS;
      if (unmutedSend && seen.connected && !seen.theyHearUs && !verdict.connecting) {
        if (path.notHearingUsSince === null) path.notHearingUsSince = now;
      } else {
        path.notHearingUsSince = null;
      }
      verdict.notGettingOurSound = unmutedSend && (seen.theyHearNoSoundFromUs
        || (path.notHearingUsSince !== null && now - path.notHearingUsSince >= NOT_GETTING_AFTER_MS));
      if (verdict.notGettingOurSound) verdict.connecting = false;
      return verdict;
    }
  }

  // −42 dBFS dark to −12 dBFS full; lit once kept up 0.15 s; 50 ms attack, 300 ms release; on at
  // a glow of 0.1, off under 0.05. Fed at 10 Hz with the loudest level of each 100 ms.
  const DARK_DBFS = -42, FULL_DBFS = -12, SUSTAIN_MS = 150, ATTACK_S = 0.05, RELEASE_S = 0.3, ON_AT = 0.1, OFF_UNDER = 0.05;

  class SpeakingIndicator {
    constructor() { this.glow = 0; this.isSpeaking = false; this.aboveSince = null; this.last = null; }

    static brightness(levelDbfs) {
      return Math.min(1, Math.max(0, (levelDbfs - DARK_DBFS) / (FULL_DBFS - DARK_DBFS)));
    }

    level(levelDbfs, now) {
      const step = this.last === null ? 0.1 : (now - this.last) / 1000;
      this.last = now;
      const input = SpeakingIndicator.brightness(levelDbfs);
      if (input > 0) { if (this.aboveSince === null) this.aboveSince = now; } else this.aboveSince = null;
      const voiced = this.aboveSince !== null && now - this.aboveSince >= SUSTAIN_MS;
      const target = voiced ? input : 0;
      const constant = target > this.glow ? ATTACK_S : RELEASE_S;
      this.glow += (target - this.glow) * (1 - Math.exp(-Math.max(0, step) / constant));
      if (this.isSpeaking) {
        if (this.glow < OFF_UNDER) this.isSpeaking = false;
      } else if (voiced && this.glow >= ON_AT) {
        this.isSpeaking = true;
      }
      return this.isSpeaking;
    }
  }

  // A linear level (getStats' and getSynchronizationSources' audioLevel, 0…1) in dBFS.
  function dbfs(linear) {
    return linear > 0 ? Math.max(-120, 20 * Math.log10(linear)) : -120;
  }

  globalThis.SharectlAudioPaths = { AudioPathRules, SpeakingIndicator, notices, dbfs };
})();
