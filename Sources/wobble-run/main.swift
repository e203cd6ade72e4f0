print("wobble-run")
