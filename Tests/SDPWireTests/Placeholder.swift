import SDPWire
