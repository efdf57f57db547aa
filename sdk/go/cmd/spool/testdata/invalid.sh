bad ÿþ utf8 â‚
