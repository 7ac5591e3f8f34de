from research_engine.cli import main

main()
