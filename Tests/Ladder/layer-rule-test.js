// Runs the shared layer cases (subscriber-layer-cases.json) on layerrule.js's SubscriberLayerRule,
// with the same alphabet as SubscriberLayerSharedCasesTests.swift: one character a second.
'use strict';

function layerSecond(character, layer, now) {
  const rate = [150, 500, 1500][Math.min(Math.max(layer, 0), 2)];
  switch (character) {
    case 'g': return { now, packets: 100, lost: 0, framesDecoded: 30, queuingDelayMs: 10, receivedKbps: rate };
    case 'n': return { now, packets: 100, lost: 0, framesDecoded: 30, queuingDelayMs: null, receivedKbps: rate };
    case 'm': return { now, packets: 96, lost: 4, framesDecoded: 30, queuingDelayMs: 10, receivedKbps: rate };
    case 'l': return { now, packets: 85, lost: 15, framesDecoded: 20, queuingDelayMs: 20, receivedKbps: 380 };
    case 'C': return { now, packets: 85, lost: 15, framesDecoded: 20, queuingDelayMs: 20, receivedKbps: 1200 };
    case 'q': return { now, packets: 100, lost: 0, framesDecoded: 25, queuingDelayMs: 200, receivedKbps: 380 };
    case 'f': return { now, packets: 100, lost: 0, framesDecoded: 0, queuingDelayMs: 10, receivedKbps: rate };
    case 'w': return { now, packets: 0, lost: 0, framesDecoded: 0, queuingDelayMs: null, receivedKbps: 0 };
    default: throw new Error(`unknown second '${character}'`);
  }
}

function runLayerCases(file) {
  const failed = [];
  let passed = 0;
  for (const c of file.cases) {
    const rule = new SubscriberLayerRule(c.top);
    let got = '';
    [...c.timeline].forEach((character, index) => {
      rule.update(layerSecond(character, rule.layer, (index + 1) * 1000));
      got += String(rule.layer);
    });
    if (got === c.expect) passed += 1; else failed.push({ name: c.name, timeline: c.timeline, expect: c.expect, got });
  }
  return { cases: file.cases.length, runs: file.cases.length, passed, failed };
}
