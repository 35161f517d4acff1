import ShareCore
