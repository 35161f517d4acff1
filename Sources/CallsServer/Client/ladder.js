// The receiver-driven ladder of the browser client as a sharer: the same rules, timings, limits,
// notices and reasons, word for word, as sharectl's ReceiverLadder (Sources/ScreenWatchdog/Ladder/
// ReceiverLadder.swift). A pure value: `tick(nowMs, people)` once a second with what each person
// last reported and what left for them; it returns the steps to take, each with its reason.
// Both are checked against the same marble cases (Tests/Ladder/receiver-ladder-cases.json): the
// Swift tests and this module's tests in headless Chromium (scripts/gates/client.py).
//
// For one person whose report says screenStalled:
//  1. keyframes to that person (again every 2 s while on this rung; in the browser the viewer's own
//     PLIs stand for them), notice "NAME's view of your screen stalled — recovering";
//  2. still reported 6 s after the first keyframe left: rebuild for that person alone,
//     notice "Restarting your share for NAME…";
//  3. still reported 10 s later: share again to everyone from the same track, no picker;
//  4. 10 s after that: give up, notice "Couldn't restore NAME's view — try Stop and Share again".
// A rebuild at most once a minute per person, a share again at most once every five minutes; a
// step its limit forbids is held and the next rung comes at its usual time. Neither rebuild nor
// share again is taken unless frames left for that person since the last step.
'use strict';

(() => {
  const KEYFRAME_REPEAT_MS = 2000;
  const REBUILD_AFTER_MS = 6000;
  const SHARE_AGAIN_AFTER_MS = 10000;
  const GIVE_UP_AFTER_MS = 10000;
  const REBUILD_EVERY_MS = 60000;
  const SHARE_AGAIN_EVERY_MS = 300000;
  const RUNGS = ['none', 'keyframes', 'rebuild', 'shareAgain', 'giveUp'];

  const Notice = {
    recovering: (name) => `${name}'s view of your screen stalled — recovering`,
    restarting: (name) => `Restarting your share for ${name}…`,
    gaveUp: (name) => `Couldn't restore ${name}'s view — try Stop and Share again`,
  };

  // "6 s", "6.5 s": whole seconds and tenths, as the Swift ladder writes a Duration.
  function seconds(ms) {
    const whole = Math.floor(ms / 1000);
    const tenths = Math.floor((ms - whole * 1000) / 100);
    return tenths === 0 ? `${whole} s` : `${whole}.${tenths} s`;
  }

  // An action: { name: 'keyframe'|'rebuild'|'shareAgain'|'giveUp'|'notice'|'recovered'|'held',
  // subject: person id (none for shareAgain), text (notice; null takes it away), step (held) }.
  function step(action, reason) {
    return { action, reason, toString() {
      return `${action.name}${action.subject !== undefined ? ` ${action.subject}` : ''}: ${reason}`;
    } };
  }

  function newPerson() {
    return { rung: 'none', lastStepAt: null, lastKeyframeRequestAt: null, firstKeyframeAt: null,
             keyframeMark: 0, sentMark: 0, lastRebuildAt: null, heldSaid: false, notice: null };
  }

  class ReceiverLadder {
    constructor() {
      this.people = new Map();      // id -> person
      this.lastShareAgainAt = null;
    }

    // The highest rung anyone is on.
    get rung() {
      let best = 0;
      for (const p of this.people.values()) best = Math.max(best, RUNGS.indexOf(p.rung));
      return RUNGS[best];
    }
    rungOf(id) { return this.people.has(id) ? this.people.get(id).rung : 'none'; }
    // The notices showing now, by person id.
    get notices() {
      const out = {};
      for (const [id, p] of this.people) if (p.notice !== null) out[id] = p.notice;
      return out;
    }

    // observed: { id: { name, stalled, framesSent, keyframesSent, framesDecoded (null: not said) } }
    tick(now, observed) {
      const steps = [];
      for (const id of [...this.people.keys()].sort()) {
        if (observed[id] === undefined && this.people.get(id).notice !== null) {
          steps.push(step({ name: 'notice', subject: id, text: null }, `${id} left the call`));
        }
      }
      for (const id of [...this.people.keys()]) if (observed[id] === undefined) this.people.delete(id);
      for (const id of Object.keys(observed).sort()) {
        const person = this.people.get(id) || newPerson();
        steps.push(...this.step(id, person, observed[id], now));
        this.people.set(id, person);
      }
      return steps;
    }

    step(id, person, seen, now) {
      const name = seen.name;
      const decoded = seen.framesDecoded === undefined ? null : seen.framesDecoded;
      // Counters that went backwards started again (a rebuild or a share again): count from zero.
      if (seen.framesSent < person.sentMark) person.sentMark = 0;
      if (seen.keyframesSent < person.keyframeMark) person.keyframeMark = 0;

      if (!seen.stalled) {
        if (person.rung === 'none') return [];
        // A rebuilt screen's count going back to zero reads as movement at the receiver; with
        // nothing decoded on the new screen that is not a recovery.
        if (RUNGS.indexOf(person.rung) >= RUNGS.indexOf('rebuild') && decoded === 0) return [];
        const was = person.rung;
        person.rung = 'none';
        person.firstKeyframeAt = null;
        person.heldSaid = false;
        const steps = [step({ name: 'recovered', subject: id },
                            `${name} no longer reports the screen stalled (was at ${was})`)];
        if (person.notice !== null) {
          person.notice = null;
          steps.push(step({ name: 'notice', subject: id, text: null }, `${name}'s view is moving again`));
        }
        return steps;
      }

      switch (person.rung) {
        case 'none': {
          person.rung = 'keyframes';
          person.lastStepAt = now;
          person.lastKeyframeRequestAt = now;
          person.firstKeyframeAt = null;
          person.keyframeMark = seen.keyframesSent;
          person.sentMark = seen.framesSent;
          person.heldSaid = false;
          return [step({ name: 'keyframe', subject: id }, `${name} reports the screen stalled`),
            ...this.notice(id, person, Notice.recovering(name), `${name} reports the screen stalled`)];
        }
        case 'keyframes': {
          if (person.firstKeyframeAt === null && seen.keyframesSent > person.keyframeMark) person.firstKeyframeAt = now;
          let steps = [];
          const first = person.firstKeyframeAt;
          if (first !== null && now - first >= REBUILD_AFTER_MS) {
            const reason = `${name} still reports the screen stalled ${seconds(now - first)} after the first keyframe left`;
            const held = this.holdWithoutFrames(id, person, seen, 'rebuild', 'the keyframes');
            if (held !== null) {
              steps = held;
            } else if (person.lastRebuildAt !== null && now - person.lastRebuildAt < REBUILD_EVERY_MS) {
              const last = person.lastRebuildAt;
              this.advance(person, 'rebuild', seen, now);
              return [step({ name: 'held', subject: id, step: 'rebuild' },
                `${reason}; no rebuild: the last one for ${name} was ${seconds(now - last)} ago (at most once a minute)`)];
            } else {
              this.advance(person, 'rebuild', seen, now);
              person.lastRebuildAt = now;
              return [step({ name: 'rebuild', subject: id }, reason),
                ...this.notice(id, person, Notice.restarting(name), `rebuilding the screen for ${name}`)];
            }
          }
          if (person.lastKeyframeRequestAt !== null && now - person.lastKeyframeRequestAt >= KEYFRAME_REPEAT_MS) {
            person.lastKeyframeRequestAt = now;
            const why = person.firstKeyframeAt === null
              ? `no keyframe has left for ${name} yet` : `${name} still reports the screen stalled`;
            steps.push(step({ name: 'keyframe', subject: id }, why));
          }
          return steps;
        }
        case 'rebuild': {
          const at = person.lastStepAt;
          if (at === null || now - at < SHARE_AGAIN_AFTER_MS) return [];
          const reason = `${name} still reports the screen stalled ${seconds(now - at)} after the rebuild`;
          const held = this.holdWithoutFrames(id, person, seen, 'shareAgain', 'the rebuild');
          if (held !== null) return held;
          const last = this.lastShareAgainAt;
          if (last !== null && now - last < SHARE_AGAIN_EVERY_MS) {
            this.advance(person, 'shareAgain', seen, now);
            return [step({ name: 'held', subject: id, step: 'shareAgain' },
              `${reason}; no share again: the last was ${seconds(now - last)} ago (at most once every five minutes)`)];
          }
          this.advance(person, 'shareAgain', seen, now);
          this.lastShareAgainAt = now;
          return [step({ name: 'shareAgain' }, reason),
            ...this.notice(id, person, Notice.restarting(name), `sharing again for ${name}`)];
        }
        case 'shareAgain': {
          const at = person.lastStepAt;
          if (at === null || now - at < GIVE_UP_AFTER_MS) return [];
          this.advance(person, 'giveUp', seen, now);
          return [step({ name: 'giveUp', subject: id },
            `${name} still reports the screen stalled ${seconds(now - at)} after the share again`),
          ...this.notice(id, person, Notice.gaveUp(name), `nothing restored ${name}'s view`)];
        }
        default:
          return [];
      }
    }

    // Rebuild and share again need frames to have left for the person since the last step.
    holdWithoutFrames(id, person, seen, stepName, after) {
      if (seen.framesSent > person.sentMark) return null;
      if (person.heldSaid) return [];
      person.heldSaid = true;
      return [step({ name: 'held', subject: id, step: stepName },
        `no ${stepName} for ${seen.name}: no frames left for them since ${after} (the screen is not leaving here)`)];
    }

    advance(person, rung, seen, now) {
      person.rung = rung;
      person.lastStepAt = now;
      person.sentMark = seen.framesSent;
      person.keyframeMark = seen.keyframesSent;
      person.heldSaid = false;
    }

    notice(id, person, text, reason) {
      if (person.notice === text) return [];
      person.notice = text;
      return [step({ name: 'notice', subject: id, text }, reason)];
    }
  }

  // What the sharer's watchdog says, in the shape of sharectl's WatchdogStatus (watchdog.* of a
  // stats line): state, rung, steps taken, the last few, the notices showing.
  class LadderStatus {
    constructor() { this.status = { state: 'watching', rung: 'none', steps: 0, recent: [], notices: [] }; }
    publish(ladder, steps, t) {
      const s = this.status;
      s.rung = ladder.rung;
      s.state = s.rung === 'giveUp' ? 'gaveUp' : s.rung !== 'none' ? 'recovering' : 'watching';
      s.notices = Object.keys(ladder.notices).sort().map((id) => ladder.notices[id]);
      for (const taken of steps) {
        if (taken.action.name === 'notice') continue;
        s.steps += 1;
        const record = { number: s.steps, t, action: taken.action.name, reason: taken.reason };
        if (taken.action.subject !== undefined) record.subject = taken.action.subject;
        s.lastStep = record;
        s.recent.push(record);
      }
      if (s.recent.length > 8) s.recent.splice(0, s.recent.length - 8);
      return s;
    }
  }

  globalThis.SharectlLadder = {
    ReceiverLadder, LadderStatus, Notice, seconds,
    timings: { KEYFRAME_REPEAT_MS, REBUILD_AFTER_MS, SHARE_AGAIN_AFTER_MS, GIVE_UP_AFTER_MS, REBUILD_EVERY_MS,
               SHARE_AGAIN_EVERY_MS },
  };
})();
