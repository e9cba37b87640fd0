# Flink's WindowWordCount example (flink-examples-streaming) over its built-in text (the
# Hamlet lines of WordCountData.WORDS, as PyFlink's word_count example copies them):
# WordCount's Tokenizer (lower case, split on \W+, (word, 1) per
# non-empty token), then sliding count windows of 10 records every 5 per word, summed.
# Recorded with the same program in Java on flink-dist 2.3.0 (local environment, 2 cores).
import re

WORDS = [
    'To be, or not to be,--that is the question:--',
    "Whether 'tis nobler in the mind to suffer",
    'The slings and arrows of outrageous fortune',
    'Or to take arms against a sea of troubles,',
    'And by opposing end them?--To die,--to sleep,--',
    'No more; and by a sleep to say we end',
    'The heartache, and the thousand natural shocks',
    "That flesh is heir to,--'tis a consummation",
    "Devoutly to be wish'd. To die,--to sleep;--",
    "To sleep! perchance to dream:--ay, there's the rub;",
    'For in that sleep of death what dreams may come,',
    'When we have shuffled off this mortal coil,',
    "Must give us pause: there's the respect",
    'That makes calamity of so long life;',
    'For who would bear the whips and scorns of time,',
    "The oppressor's wrong, the proud man's contumely,",
    "The pangs of despis'd love, the law's delay,",
    'The insolence of office, and the spurns',
    'That patient merit of the unworthy takes,',
    'When he himself might his quietus make',
    'With a bare bodkin? who would these fardels bear,',
    'To grunt and sweat under a weary life,',
    'But that the dread of something after death,--',
    "The undiscover'd country, from whose bourn",
    'No traveller returns,--puzzles the will,',
    'And makes us rather bear those ills we have',
    'Than fly to others that we know not of?',
    'Thus conscience does make cowards of us all;',
    'And thus the native hue of resolution',
    "Is sicklied o'er with the pale cast of thought;",
    'And enterprises of great pith and moment,',
    'With this regard, their currents turn awry,',
    'And lose the name of action.--Soft you now!',
    'The fair Ophelia!--Nymph, in thy orisons',
    "Be all my sins remember'd.",
]


def tokenize(line):
    # Java's \W is ASCII-only.
    for token in re.split(r"\W+", line.lower(), flags=re.ASCII):
        if token:
            yield (token, 1)


env.set_parallelism(2)
result = env.from_collection(WORDS).flat_map(tokenize).key_by(lambda pair: pair[0]).count_window(10, 5).sum(1)
