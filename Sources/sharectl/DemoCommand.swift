enum DemoCommand {
    static func run(_ arguments: Arguments) throws {
        print("demo: not yet — the pipeline demo arrives with the encoders and RTP packetization")
    }
}
